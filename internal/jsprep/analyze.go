package jsprep

import (
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

// analysis is what the parser found in the body of the script's async function.
type analysis struct {
	hasReturn  bool   // a return statement outside any nested function
	wrap       bool   // the last statement can become the body's result
	form       string // "expression" or "function"
	start, end int    // byte offsets of that statement's text (without its semicolon)
	bodyEnd    int    // byte offset of the body's closing brace
}

// analyze parses text, a call Boot(call, (async function () {...})), and finds the body's top-level return and
// its last statement. ok is false when text does not parse as JavaScript.
func analyze(text string) (analysis, bool) {
	prog, err := parser.ParseFile(nil, "", text, 0)
	if err != nil || len(prog.Body) == 0 {
		return analysis{}, false
	}
	fn := bootFunction(prog.Body[0])
	if fn == nil {
		return analysis{}, false
	}
	var a analysis
	list := fn.Body.List
	a.hasReturn = anyReturn(list)
	// Statements follow one another: the last one's text starts at the first token after the one before it
	// (goja's own start of an expression statement skips its opening parentheses).
	from := int(fn.Body.LeftBrace) // 1-based offset of "{", so the 0-based offset just past it
	var last ast.Statement
	count := 0
	for _, st := range list {
		if _, empty := st.(*ast.EmptyStatement); empty {
			continue
		}
		if last != nil {
			from = int(last.Idx1()) - 1
		}
		last = st
		count++
	}
	if last == nil {
		return a, true
	}
	switch st := last.(type) {
	case *ast.ExpressionStatement:
		a.wrap, a.form = true, "expression"
	case *ast.FunctionDeclaration:
		// One function and nothing else: the form `async function main() {...}`. With other statements it
		// may already have been called, so it is left alone.
		a.wrap, a.form = count == 1, "function"
		_ = st
	}
	a.start = skipCode(text, from)
	a.end = int(last.Idx1()) - 1
	a.bodyEnd = int(fn.Body.RightBrace) - 1
	return a, true
}

// skipCode skips spaces, comments and semicolons.
func skipCode(s string, i int) int {
	for {
		i = skipSpace(s, i)
		if i < len(s) && s[i] == ';' {
			i++
			continue
		}
		return i
	}
}

// bootFunction is main in the statement Boot(call, main).
func bootFunction(st ast.Statement) *ast.FunctionLiteral {
	es, ok := st.(*ast.ExpressionStatement)
	if !ok {
		return nil
	}
	call, ok := es.Expression.(*ast.CallExpression)
	if !ok || len(call.ArgumentList) != 2 {
		return nil
	}
	if id, ok := call.Callee.(*ast.Identifier); !ok || id.Name != Boot {
		return nil
	}
	fn, _ := call.ArgumentList[1].(*ast.FunctionLiteral)
	return fn
}

// anyReturn reports a return statement in list outside nested functions (which are expressions or
// declarations, never walked).
func anyReturn(list []ast.Statement) bool {
	for _, st := range list {
		if hasReturn(st) {
			return true
		}
	}
	return false
}

func hasReturn(st ast.Statement) bool {
	switch s := st.(type) {
	case *ast.ReturnStatement:
		return true
	case *ast.BlockStatement:
		return anyReturn(s.List)
	case *ast.IfStatement:
		return hasReturn(s.Consequent) || s.Alternate != nil && hasReturn(s.Alternate)
	case *ast.ForStatement:
		return hasReturn(s.Body)
	case *ast.ForInStatement:
		return hasReturn(s.Body)
	case *ast.ForOfStatement:
		return hasReturn(s.Body)
	case *ast.WhileStatement:
		return hasReturn(s.Body)
	case *ast.DoWhileStatement:
		return hasReturn(s.Body)
	case *ast.LabelledStatement:
		return hasReturn(s.Statement)
	case *ast.WithStatement:
		return hasReturn(s.Body)
	case *ast.SwitchStatement:
		for _, c := range s.Body {
			if anyReturn(c.Consequent) {
				return true
			}
		}
	case *ast.TryStatement:
		return hasReturn(s.Body) || s.Catch != nil && hasReturn(s.Catch.Body) || s.Finally != nil && hasReturn(s.Finally)
	}
	return false
}
