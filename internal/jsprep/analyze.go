package jsprep

import (
	"fmt"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

// analysis is what the parser found in the body of the script's async function.
type analysis struct {
	hasReturn  bool   // a return statement outside any nested function
	wrap       bool   // the last statement can become the body's result
	form       string // "expression" or "function"
	start      int    // byte offset where the value's expression starts
	inSequence bool   // that expression is the last of a sequence
	bodyEnd    int    // byte offset of the body's closing brace
}

// analyze parses text, a call Boot(call, (async function () {...})), and finds the body's top-level return and
// its last statement. ok is false when text does not parse as JavaScript.
func analyze(text string) (a analysis, ok bool) {
	prog, err := parse(text)
	if err != nil || len(prog.Body) == 0 {
		return analysis{}, false
	}
	fn := bootFunction(prog.Body[0])
	if fn == nil {
		return analysis{}, false
	}
	list := fn.Body.List
	a.hasReturn = anyReturn(list)
	var last ast.Statement
	count := 0
	for _, st := range list {
		if _, empty := st.(*ast.EmptyStatement); empty {
			continue
		}
		last = st
		count++
	}
	if last == nil {
		return a, true
	}
	// Only starts are used: goja's ends of identifiers that are not ASCII are wrong (it counts the UTF-16
	// form), while every start is the scanner's own byte offset.
	var start int
	switch st := last.(type) {
	case *ast.ExpressionStatement:
		a.wrap, a.form = true, "expression"
		e := st.Expression
		if seq, ok := e.(*ast.SequenceExpression); ok && len(seq.Sequence) > 0 {
			// `a, b` is worth b: the assignment goes before the last element, as it binds tighter than ",".
			e = seq.Sequence[len(seq.Sequence)-1]
			a.inSequence = true
		}
		start = openingStart(text, leftmost(e)-1)
	case *ast.FunctionDeclaration:
		// One function and nothing else: the form `async function main() {...}`. With other statements it
		// may already have been called, so it is left alone.
		a.wrap, a.form = count == 1, "function"
		start = asyncStart(text, int(st.Idx0())-1)
	}
	a.start = start
	a.bodyEnd = int(fn.Body.RightBrace) - 1
	return a, true
}

// openingStart moves back from i to the first of the opening parentheses (with spaces and block comments
// between them) that goja's start of an expression leaves out.
func openingStart(text string, i int) int {
	start := i
	for i > 0 {
		switch c := text[i-1]; {
		case c == '(':
			i--
			start = i
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i--
		case c == '/' && i >= 2 && text[i-2] == '*':
			open := strings.LastIndex(text[:i-2], "/*")
			if open < 0 {
				return start
			}
			i = open
		default:
			return start
		}
	}
	return start
}

// leftmost is where e's first token is: the start of the innermost node along its left edge. goja's start of
// some expressions is not their first token (a tagged template starts at its template, not its tag), and its
// start of a chain walks the chain, so the edge is walked here once, and only its last node asked.
func leftmost(e ast.Expression) int {
	for {
		var next ast.Expression
		switch x := e.(type) {
		case *ast.CallExpression:
			next = x.Callee
		case *ast.DotExpression:
			next = x.Left
		case *ast.PrivateDotExpression:
			next = x.Left
		case *ast.BracketExpression:
			next = x.Left
		case *ast.BinaryExpression:
			next = x.Left
		case *ast.AssignExpression:
			next = x.Left
		case *ast.ConditionalExpression:
			next = x.Test
		case *ast.SequenceExpression:
			if len(x.Sequence) > 0 {
				next = x.Sequence[0]
			}
		case *ast.TemplateLiteral:
			if x.Tag != nil {
				next = x.Tag
			}
		case *ast.UnaryExpression:
			if x.Postfix {
				next = x.Operand
			}
		case *ast.OptionalChain:
			next = x.Expression
		case *ast.Optional:
			next = x.Expression
		}
		if next == nil || isNilExpr(next) {
			return int(e.Idx0())
		}
		e = next
	}
}

// isNilExpr catches a typed nil in an interface (a template without a tag).
func isNilExpr(e ast.Expression) bool {
	if t, ok := e.(*ast.TemplateLiteral); ok {
		return t == nil
	}
	return false
}

// asyncStart moves back from a function keyword at i over an `async` before it.
func asyncStart(text string, i int) int {
	j := i
	for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t' || text[j-1] == '\n' || text[j-1] == '\r') {
		j--
	}
	if j >= 5 && text[j-5:j] == "async" && (j == 5 || !isIdent(text[j-6])) {
		return j - 5
	}
	return i
}

// parse is goja's parser, which panics on some malformed input (found by fuzzing: a destructuring pattern
// cut short); a panic counts as code it cannot read, which goes on to esbuild.
func parse(text string) (prog *ast.Program, err error) {
	defer func() {
		if r := recover(); r != nil {
			prog, err = nil, fmt.Errorf("goja's parser failed: %v", r)
		}
	}()
	return parser.ParseFile(nil, "", text, 0)
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
