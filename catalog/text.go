package catalog

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolsearch/toolsearch/internal/textcut"
)

// maxTokenBytes bounds one token: longer runs are base64, hashes or garbage, never words an agent types.
const maxTokenBytes = 48

// splitWords calls fn with each word of s, lowercased: runs of letters and digits, split again at camelCase
// boundaries ("getHTTPResponse" → get, http, response). Separators (_ - . : / space ...) end words; combining
// marks continue them (Devanagari vowel signs, decomposed accents). Letters and digits stay together ("s3",
// "ec2", "oauth2") because that is how services are named. One-letter words are dropped.
//
// Scripts written without spaces between words (Chinese, Japanese, Korean, Thai, Lao, Khmer, Myanmar) have no
// words to find, so their runs are indexed as overlapping pairs of characters, as Lucene's CJK analyzer does:
// "搜索网页" → 搜索, 索网, 网页; a lone character is a word of its own. A request and a description that share a
// two-character word then share a term, whatever comes around it. A character here is a base with its marks.
// It never allocates for ASCII words that are already lowercase.
func splitWords(s string, fn func(word string)) { splitTokens(s, 2, fn) }

// splitTokens is splitWords keeping words of at least minLen bytes: 1 keeps single letters and digits, which the
// index reads as hints (see singlePrefix).
func splitTokens(s string, minLen int, fn func(word string)) {
	start := -1 // byte offset of the current word
	var prev rune
	emit := func(end int) {
		if start < 0 {
			return
		}
		w := lower(s[start:end])
		start = -1
		if len(w) < minLen || len(w) > maxTokenBytes {
			return
		}
		fn(w)
	}
	// The current run of unspaced script: where its previous and its current character start (-1: none).
	prevChar, curChar := -1, -1
	endRun := func(end int) {
		switch {
		case prevChar >= 0:
			fn(s[prevChar:end])
		case curChar >= 0:
			fn(s[curChar:end])
		}
		prevChar, curChar = -1, -1
	}
	for i, r := range s {
		if unicode.In(r, unicode.Mn, unicode.Mc) && (start >= 0 || curChar >= 0) {
			continue // part of the character before it
		}
		if isUnspaced(r) {
			emit(i)
			if prevChar >= 0 {
				fn(s[prevChar:i])
			}
			if curChar >= 0 {
				prevChar = curChar
			}
			curChar = i
			prev = r
			continue
		}
		endRun(i)
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			emit(i)
			prev = r
			continue
		}
		if start >= 0 && isUpper(r) {
			if unicode.IsLower(prev) {
				emit(i) // fooBar
			} else if isUpper(prev) {
				// HTTPServer: the last upper letter before a lower one starts the next word.
				next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
				if unicode.IsLower(next) {
					emit(i)
				}
			}
		}
		if start < 0 {
			start = i
		}
		prev = r
	}
	endRun(len(s))
	emit(len(s))
}

// unspacedScripts are the scripts written without spaces between words.
var unspacedScripts = []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
	unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar}

// isUnspaced reports a letter of an unspaced script, or the Japanese prolonged-sound and iteration marks that
// belong to their words (ー, 々).
func isUnspaced(r rune) bool {
	if r < 0x0e00 {
		return false // below Thai: the common case of Latin, Greek, Cyrillic, Arabic, Devanagari ... stays cheap
	}
	return r == 'ー' || r == '々' || (unicode.IsLetter(r) || unicode.IsDigit(r)) && unicode.In(r, unspacedScripts...)
}

// isUpper reports upper-case letters that have a lower-case form. Letters such as "ϒ" are upper case without
// one; counting them would split a word at a boundary that is gone once the word is lowercased.
func isUpper(r rune) bool {
	return unicode.IsUpper(r) && unicode.ToLower(r) != r
}

// lower lowercases w rune by rune, without allocating when it already is lowercase ASCII. strings.ToLower is
// not used: its special cases turn "İ" into "i" plus a combining dot, which is not a letter and would split the
// word differently the next time it is read.
func lower(w string) string {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			return strings.Map(unicode.ToLower, w)
		}
	}
	return w
}

// isStopWord reports words that carry no tool-choosing signal, including the filler agents put around a need
// ("I want to", "please", "a tool that can"). "tool" itself is not one: "list tools" is a real query.
func isStopWord(w string) bool {
	switch w {
	case "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "before",
		"being", "but", "by", "can", "could", "did", "do", "does", "doing", "each", "either", "etc", "for", "from",
		"had", "has", "have", "having", "he", "her", "here", "him", "his", "how", "i", "if", "in", "into", "is",
		"it", "its", "itself", "just", "let", "lets", "like", "may", "me", "might", "mine", "more", "most", "must",
		"my", "myself", "need", "needs", "no", "nor", "not", "now", "of", "on", "onto", "or", "other", "our",
		"ours", "please", "same", "shall", "she", "should", "so", "some", "such", "than", "that", "the", "their",
		"theirs", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too", "us", "use",
		"using", "very", "via", "want", "wanna", "was", "we", "were", "what", "when", "where", "whether", "which",
		"while", "who", "whom", "whose", "why", "will", "with", "within", "would", "you", "your", "yours",
		"yourself", "e.g", "eg", "ie", "i.e", "somebody", "someone", "something", "thing", "things":
		return true
	}
	return false
}

// noStem lists words the suffix rules below would mangle into another word's stem.
func noStem(w string) bool {
	switch w {
	case "embed", "need", "feed", "seed", "speed", "bleed", "news", "always", "canvas", "alias", "atlas",
		"bus", "gas", "series", "species", "https", "kubernetes", "during", "thing", "ring", "bring", "king",
		"sing", "wing", "spring", "swing", "sling":
		return true
	}
	return false
}

// stem is a light English stemmer: plurals, -ed, -ing, -ation and a final e, so that create, creates, created,
// creating and creation meet. It does not try to be linguistically right (Porter's derivational steps make
// "general" and "generate" collide, which hurts short tool descriptions); both the index and the query go
// through it, so it only has to be consistent.
func stem(w string) string {
	if len(w) < 3 || noStem(w) || !isASCIILetters(w) {
		return w
	}
	// Plurals and third person.
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") ||
		strings.HasSuffix(w, "zes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") &&
		!(strings.HasSuffix(w, "is") && len(w) > 4):
		w = w[:len(w)-1]
	}
	// Past and progressive.
	switch {
	case strings.HasSuffix(w, "ied") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "eed"):
	case strings.HasSuffix(w, "ed"):
		if rest := w[:len(w)-2]; len(rest) >= 3 && hasVowel(rest) {
			w = undouble(rest)
		}
	case strings.HasSuffix(w, "ing"):
		if rest := w[:len(w)-3]; len(rest) >= 3 && hasVowel(rest) {
			w = undouble(rest)
		}
	}
	// The few derivations that matter for tools: notification/notify, authorization/authorize, creation/create.
	switch {
	case strings.HasSuffix(w, "ification"):
		w = w[:len(w)-len("ification")] + "ify"
	case strings.HasSuffix(w, "ization") || strings.HasSuffix(w, "isation"):
		w = w[:len(w)-len("ization")] + "ize"
	case strings.HasSuffix(w, "ation") && len(w) > 7:
		w = w[:len(w)-len("ation")] + "ate"
	}
	// The plural rule turns "movies" into "movy", as it must for "categories" → category; a singular in -ie
	// ("movie", "cookie", "calorie") has to land on the same stem, or a request for a movie never meets the
	// tools that find movies. Shorter words ("tie", "pie") keep their e: their plurals take the plain -s rule.
	if strings.HasSuffix(w, "ie") && len(w) >= 5 {
		w = w[:len(w)-2] + "y"
	}
	if strings.HasSuffix(w, "e") && len(w) >= 4 {
		w = w[:len(w)-1]
	}
	return w
}

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func hasVowel(w string) bool {
	return strings.ContainsAny(w, "aeiouy")
}

// undouble turns "runn" into "run" and "stopp" into "stop", but keeps "add", "call", "pass" and "buzz".
func undouble(w string) string {
	n := len(w)
	if n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouylsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// analyze is the whole pipeline for one word: stop words out, then stem. It returns "" for a dropped word.
func analyze(w string) string {
	if isStopWord(w) {
		return ""
	}
	return stem(w)
}

// tokenize returns the analyzed terms of s in order, duplicates included.
func tokenize(s string) []string {
	var out []string
	splitWords(s, func(w string) {
		if t := analyze(w); t != "" {
			out = append(out, t)
		}
	})
	return out
}

// isLightVerb reports verbs that say little about which tool is meant ("make a label", "take a note", "put the
// customer on a plan"): they are words of many tool names, so matching them must not outweigh the object.
func isLightVerb(stem string) bool {
	switch stem {
	case "mak", "tak", "put", "giv", "get", "go", "keep", "show", "see", "tell", "help", "try", "bring", "do",
		"check", "look", "grab", "pull":
		return true
	}
	return false
}

// abbreviation expands shorthand an agent types into the words tools spell out. Unlike a synonym, the expansion
// counts fully: "pr" is a pull request. It joins the shorthand's group, so one concept is still one query word.
func abbreviation(w string) string {
	switch w {
	case "pr", "prs":
		return "pull request"
	case "mr":
		return "merge request"
	case "mkdir":
		return "create directory"
	case "rm", "rmdir":
		return "remove delete"
	case "ls":
		return "list"
	case "ack":
		return "acknowledge"
	case "dm", "dms":
		return "direct message"
	case "repo", "repos":
		return "repository"
	case "db":
		return "database"
	case "k8s", "kube":
		return "kubernetes"
	case "env":
		return "environment"
	case "config", "cfg":
		return "configuration"
	case "msg", "msgs":
		return "message"
	case "img", "pic", "pics":
		return "image picture"
	case "doc", "docs":
		return "document"
	case "info":
		return "information details"
	case "stats":
		return "statistics"
	case "auth":
		return "authentication"
	case "creds":
		return "credentials"
	case "tz":
		return "timezone"
	case "qty":
		return "quantity"
	case "addr":
		return "address"
	case "cpu":
		return "cpu utilization"
	case "vm", "vms":
		return "virtual machine instance"
	case "ci":
		return "ci checks workflow"
	case "sms":
		return "sms text"
	case "url", "urls":
		return "url link"
	case "todo", "todos":
		return "todo task"
	case "eta":
		return "estimated time arrival"
	}
	return ""
}

// synonymGroups are words an agent uses interchangeably when it names a need. Each line is one group; a word may
// sit in several. They are deliberately generic (verbs and everyday nouns of tool catalogs), not tuned to any
// one catalog: the index expands a query term to the other members of its groups at a lower weight.
const synonymGroups = `
get fetch retrieve obtain read show view lookup load
list enumerate browse show
search find query lookup locate look discover
create add new make insert generate
delete remove destroy erase drop purge trash discard
update edit modify change patch alter
set configure assign
send post publish deliver dispatch
notify notification alert
message msg dm chat
run execute exec invoke launch trigger start
stop kill terminate halt cancel abort
upload put attach
download save export
write save store persist
copy duplicate clone
move rename relocate
schedule book plan
close resolve complete finish
reply respond answer
summarize summary digest
convert transform
compare diff
merge combine
approve accept
reject decline
restart reboot
deploy release ship
repository repo
pull pr
issue ticket bug
directory dir folder
document doc docs
database db
image img picture photo pic
screenshot screencap capture
email mail inbox
event meeting appointment
calendar agenda
user member person people account
channel room
invoice bill
payment charge transaction
customer client
kubernetes k8s
environment env
configuration config settings preferences
instance vm server machine host
url link website webpage page site
web internet online
note memo
reminder remind alarm
todo task
weather forecast
spreadsheet sheet
presentation slides deck
credential secret password
error exception crash
container docker
cost spend billing price
sms text
terminal shell command bash console
label tag
metric metrics stats statistics analytics
status state health
`

// SearchText is the text the index reads of one tool, field by field: what another ranker needs to index
// exactly the same documents (the benchmark peers, or an embedding index kept beside the catalog).
type SearchText struct {
	Name, Label, Source, Description, Parameters string
}

// TextOf returns the text the index reads of t: its name, label, source name, description (bounded) and the
// bounded text of its parameter schema.
func TextOf(t *Tool) SearchText {
	return SearchText{Name: t.Name, Label: t.Label, Source: t.SourceName,
		Description: textcut.Prefix(t.Description, maxDescribeText), Parameters: paramText(t.Parameters)}
}

// String is all the fields in one text, for rankers with a single field.
func (s SearchText) String() string {
	return s.Name + "\n" + s.Label + "\n" + s.Source + "\n" + s.Description + "\n" + s.Parameters
}

// Words splits s into words as the index does (lowercased; at separators and camelCase boundaries; words of one
// letter dropped) and drops stop words, without stemming: the query processing a plain ranker compared with
// this one should get.
func Words(s string) []string {
	var out []string
	splitWords(s, func(w string) {
		if !isStopWord(w) {
			out = append(out, w)
		}
	})
	return out
}

// isFramingWord reports words that frame a request instead of naming the need: greetings and fillers ("hey",
// "actually"), the asking itself ("assist", "provide", "suggest", "is it possible", "a way to"), and words about
// tools in general ("tool", "plugin", "information"). A long request is full of them, and a tool whose text has
// one of them is no closer to the need. Like light verbs they still count a little.
func isFramingWord(stem string) bool {
	switch stem {
	case "hey", "hi", "hello", "thank", "oh", "wow", "okay", "ok", "ye", "yeah", "really", "actually", "mayb",
		"perhap", "kindly", "assist", "assistanc", "provid", "know", "suggest", "suggestion", "recommend",
		"recommendat", "advic", "advis", "wonder", "abl", "possibl", "way", "kind", "sort", "lot", "bit",
		"specific", "particular", "certain", "various", "tool", "plugin", "informat", "one", "currently":
		return true
	}
	return false
}

// longRequestWords is where a request stops being terse: one with more content words than this is ranked as a
// request (see rankConfig.long), one with at most this many exactly as a keyword query.
const longRequestWords = 6

// contentWords counts the distinct words of q that carry its need, as the ranker counts them with its default
// settings: of the query's first maxQueryGroups distinct words (after stop words), those that are not light verbs
// or framing words.
func contentWords(q string) int {
	q = textcut.Prefix(q, maxQueryBytes)
	seen := make(map[string]bool)
	n := 0
	splitWords(q, func(w string) {
		t := analyze(w)
		if t == "" || seen[t] || len(seen) >= maxQueryGroups {
			return
		}
		seen[t] = true
		if !isLightVerb(t) && !isFramingWord(t) {
			n++
		}
	})
	return n
}
