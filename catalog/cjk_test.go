package catalog

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/corpus"
)

func TestSplitWordsUnspacedScripts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"搜索网页内容", []string{"搜索", "索网", "网页", "页内", "内容"}},
		{"Python编程 教程", []string{"python", "编程", "教程"}},
		{"東京の天気", []string{"東京", "京の", "の天", "天気"}},
		{"カレンダー", []string{"カレ", "レン", "ンダ", "ダー"}},
		{"날씨 알려줘", []string{"날씨", "알려", "려줘"}},
		{"a中b", []string{"中"}}, // a lone character is a word; one-letter Latin words are still dropped
		{"查询12306余票", []string{"查询", "12306", "余票"}},
		{"getHTTPResponse", []string{"get", "http", "response"}},
		// A base with its marks is one character: Thai vowel signs, Devanagari matras stay in their words.
		{"สวัสดี", []string{"สวั", "วัส", "สดี"}},
		{"हिन्दी में", []string{"हिन्दी", "में"}},
		{"\u0301abc", []string{"abc"}}, // a mark with nothing before it belongs to no word
	} {
		var got []string
		splitWords(tc.in, func(w string) { got = append(got, w) })
		assert.Equal(t, tc.want, got, tc.in)
	}
}

// Chinese and Japanese tools are found by Chinese and Japanese requests, beside English tools that share no
// script with them; before requests in these scripts were split into character pairs, a sentence was one
// over-long token and found nothing.
func TestSearchChineseAndJapanese(t *testing.T) {
	tools := []Tool{
		{Source: SourceMCP, SourceName: "weather", Name: "get_forecast", Description: "Get the weather forecast for a city."},
		{Source: SourceMCP, SourceName: "tenki", Name: "get_tenki", Description: "指定した都市の天気予報を取得します。"},
		{Source: SourceMCP, SourceName: "tenki", Name: "get_typhoon", Description: "現在の台風情報と進路予想を返します。"},
		{Source: SourceMCP, SourceName: "karenda", Name: "add_event", Description: "カレンダーに新しい予定を追加します。"},
		{Source: SourceMCP, SourceName: "karenda", Name: "list_events", Description: "カレンダーの予定を一覧表示します。"},
		{Source: SourceMCP, SourceName: "ditu", Name: "route", Description: "规划两个地点之间的驾车路线。"},
		{Source: SourceMCP, SourceName: "ditu", Name: "geocode", Description: "把地址转换成经纬度坐标。"},
		{Source: SourceMCP, SourceName: "fanyi", Name: "translate", Description: "把一段文本翻译成另一种语言。"},
		{Source: SourceMCP, SourceName: "files", Name: "read_file", Description: "Read a file from disk."},
	}
	c, err := New(tools, nil)
	require.NoError(t, err)
	for _, tc := range []struct{ q, want string }{
		{"東京の天気予報を教えて", "mcp:tenki:get_tenki"},
		{"台風の進路はどうなっていますか", "mcp:tenki:get_typhoon"},
		{"明日の会議をカレンダーに追加して", "mcp:karenda:add_event"},
		{"今週の予定を一覧で見せて", "mcp:karenda:list_events"},
		{"帮我规划从公司到机场的驾车路线", "mcp:ditu:route"},
		{"这个地址的经纬度是多少", "mcp:ditu:geocode"},
		{"请把这句话翻译成英语", "mcp:fanyi:translate"},
		{"weather forecast for Paris", "mcp:weather:get_forecast"},
	} {
		hits, err := c.Search(context.Background(), tc.q, 3)
		require.NoError(t, err)
		require.NotEmpty(t, hits, tc.q)
		assert.Equal(t, tc.want, hits[0].ID, tc.q)
	}
}

// The Chinese descriptions of the real MCP tools (61 of the corpus's 644) are searchable by Chinese requests.
func TestSearchChineseMCPTools(t *testing.T) {
	tools, err := ParseFile(corpus.CatalogFile())
	require.NoError(t, err)
	c, err := New(tools, nil)
	require.NoError(t, err)
	for _, tc := range []struct {
		q    string
		want []string // any of these first
	}{
		{"获取抖音热搜", []string{"mcp:trends-hub:get-douyin-trending"}},
		{"今日头条热榜", []string{"mcp:trends-hub:get-toutiao-trending"}},
		{"查询12306中转余票", []string{"mcp:12306-mcp:get-interline-tickets"}},
		{"根据阳历时间计算八字", []string{"mcp:Bazi:buildBaziFromSolarDatetime"}},
		{"把SVG图像插入PPTX", []string{"mcp:okppt:insert_svg"}},
		{"搜索游戏王卡牌", []string{"mcp:ygocdb:search_cards"}},
		{"按分类查询菜谱", []string{"mcp:howtocook-mcp:mcp_howtocook_getRecipesByCategory"}},
		{"通过城市名查询车站代码", []string{"mcp:12306-mcp:get-stations-code-in-city", "mcp:12306-mcp:get-station-code-of-citys"}},
		{"掘金文章榜", []string{"mcp:trends-hub:get-juejin-article-rank"}},
		{"Ant Design 组件更新日志", []string{"mcp:Ant_Design_Components:get-component-changelog"}},
	} {
		hits, err := c.Search(context.Background(), tc.q, 3)
		require.NoError(t, err)
		require.NotEmpty(t, hits, tc.q)
		assert.Contains(t, tc.want, hits[0].ID, tc.q)
	}
}
