package filter

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm/runtime"
)

// The rule for values that are not there is Wireshark's: a comparison with an absent field is
// false, whatever the operator (`!=` does not match it either), and a null value is nil, which
// is there (`== nil` holds for it, `!= nil` does not).
//
// A field is absent when the message does not have it at its version, when its side of the
// pair was not captured, when it is a field of a null or absent struct, and an element past a
// list's end is absent too. An absent value is an absentValue, never nil: nil is null.
//
// absentPatcher applies the rule where an operand can come from a body, that is where the
// checker knows no type for it: a field or element access gives the absent value for what is
// not there (_field); a comparison with an absent operand is false, arithmetic on one absent;
// where a boolean is wanted (&&, ||, not, ?:, a predicate) absent and nil count as false; a
// builtin over an absent or null list sees an empty list; `??` replaces an absent value as it
// does nil.
type absentPatcher struct{}

// absentValue is the value of a field that is absent.
type absentValue struct{}

func (absentValue) String() string { return "absent" }

func isAbsent(v any) bool {
	_, ok := v.(absentValue)
	return ok
}

// binaryOp is an operator applied by a function, so that an absent operand can be seen.
type binaryOp struct {
	fn string
	// comparison: the result is a bool, false when an operand is absent; otherwise (arithmetic)
	// the result is absent.
	comparison bool
	do         func(a, b any) any
}

// binaryOps are the operators the rule applies to; the others (&&, ||, ??) are rewritten apart.
var binaryOps = map[string]binaryOp{
	"==":         {"_eq", true, func(a, b any) any { return runtime.Equal(a, b) }},
	"!=":         {"_ne", true, func(a, b any) any { return !runtime.Equal(a, b) }},
	"<":          {"_lt", true, ordered(runtime.Less)},
	">":          {"_gt", true, ordered(runtime.More)},
	"<=":         {"_le", true, ordered(runtime.LessOrEqual)},
	">=":         {"_ge", true, ordered(runtime.MoreOrEqual)},
	"in":         {"_in", true, func(a, b any) any { return runtime.In(a, b) }},
	"contains":   {"_contains", true, text(strings.Contains)},
	"startsWith": {"_startsWith", true, text(strings.HasPrefix)},
	"endsWith":   {"_endsWith", true, text(strings.HasSuffix)},
	"matches":    {"_matches", true, matches},
	"+":          {"_add", false, runtime.Add},
	"-":          {"_sub", false, runtime.Subtract},
	"*":          {"_mul", false, runtime.Multiply},
	"/":          {"_div", false, func(a, b any) any { return runtime.Divide(a, b) }},
	"%":          {"_mod", false, func(a, b any) any { return runtime.Modulo(a, b) }},
}

// ordered is an ordering comparison, false with a null operand.
func ordered(cmp func(a, b any) bool) func(a, b any) any {
	return func(a, b any) any { return a != nil && b != nil && cmp(a, b) }
}

// text is a string operator, false with a null operand, as expr has it.
func text(op func(s, sub string) bool) func(a, b any) any {
	return func(a, b any) any { return a != nil && b != nil && op(a.(string), b.(string)) }
}

// matches is `a matches b`: b is a regexp compiled when the expression was (a constant), or a
// string compiled now.
func matches(a, b any) any {
	if a == nil || b == nil {
		return false
	}
	re, ok := b.(*regexp.Regexp)
	if !ok {
		re = regexp.MustCompile(b.(string))
	}
	return re.MatchString(a.(string))
}

// call is the function an operator's calls reach: the rule, then the operator. A failure (a
// list compared with a number) is an error, not a panic.
func (op binaryOp) call(args ...any) (out any, err error) {
	a, b := args[0], args[1]
	if isAbsent(a) || isAbsent(b) {
		if op.comparison {
			return false, nil
		}
		return absentValue{}, nil
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return op.do(a, b), nil
}

// absentRule is the options that apply the rule.
func absentRule() []expr.Option {
	opts := []expr.Option{expr.Patch(absentPatcher{}),
		expr.Function("_field", field, new(func(any, any) any)),
		expr.Function("_list", list, new(func(any) any)),
		expr.Function("_truth", truth, new(func(any) bool)),
		expr.Function("_or", orElse, new(func(any, any) any)),
	}
	for _, op := range binaryOps {
		typ := any(new(func(any, any) any))
		if op.comparison {
			typ = new(func(any, any) bool)
		}
		opts = append(opts, expr.Function(op.fn, op.call, typ))
	}
	return opts
}

// field is `from.key` or `from[key]`: what a map holds under key, a list's element, or the
// absent value when there is no such field or element (or from is null or absent).
func field(args ...any) (out any, err error) {
	from, key := args[0], args[1]
	switch v := from.(type) {
	case nil, absentValue:
		return absentValue{}, nil
	case map[string]any:
		if s, ok := key.(string); ok {
			if x, ok := v[s]; ok {
				return x, nil
			}
			return absentValue{}, nil
		}
	case []any:
		if i, ok := key.(int); ok {
			if i < 0 {
				i += len(v) // from the end, as expr counts
			}
			if i < 0 || i >= len(v) {
				return absentValue{}, nil
			}
			return v[i], nil
		}
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return runtime.Fetch(from, key), nil
}

// list is a builtin's list: an absent or null one is empty.
func list(args ...any) (any, error) {
	if args[0] == nil || isAbsent(args[0]) {
		return []any{}, nil
	}
	return args[0], nil
}

// truth is a value where a boolean is wanted: absent and null are false.
func truth(args ...any) (any, error) {
	switch v := args[0].(type) {
	case bool:
		return v, nil
	case nil, absentValue:
		return false, nil
	}
	return nil, fmt.Errorf("%v (%T) is not a boolean", args[0], args[0])
}

// orElse is `a ?? b`: b when a is absent or null.
func orElse(args ...any) (any, error) {
	if args[0] == nil || isAbsent(args[0]) {
		return args[1], nil
	}
	return args[0], nil
}

// predicates are the builtins whose second argument is a predicate: its value is a boolean.
var predicates = map[string]bool{
	"all": true, "none": true, "any": true, "one": true, "filter": true, "find": true,
	"findIndex": true, "findLast": true, "findLastIndex": true, "count": true,
}

var boolType = reflect.TypeFor[bool]()

func (absentPatcher) Visit(n *ast.Node) {
	switch v := (*n).(type) {
	case *ast.MemberNode:
		if !v.Method && (untyped(v.Node) || v.Node.Type() == bodyType) {
			call(n, "_field", nil, v.Node, v.Property)
		}
	case *ast.BinaryNode:
		switch op, ok := binaryOps[v.Operator]; {
		case v.Operator == "&&" || v.Operator == "||" || v.Operator == "and" || v.Operator == "or":
			v.Left, v.Right = truthOf(v.Left), truthOf(v.Right)
		case v.Operator == "??" && untyped(v.Left):
			call(n, "_or", nil, v.Left, v.Right)
		case ok && (untyped(v.Left) || untyped(v.Right)):
			right := v.Right
			if s, isConst := right.(*ast.StringNode); isConst && v.Operator == "matches" {
				// The checker has compiled it once already: it cannot fail here.
				right = &ast.ConstantNode{Value: regexp.MustCompile(s.Value)}
			}
			var typ reflect.Type
			if op.comparison {
				typ = boolType
			}
			call(n, op.fn, typ, v.Left, right)
		}
	case *ast.UnaryNode:
		if v.Operator == "not" || v.Operator == "!" {
			v.Node = truthOf(v.Node)
		}
	case *ast.ConditionalNode:
		v.Cond = truthOf(v.Cond)
	case *ast.BuiltinNode:
		if len(v.Arguments) > 0 && untyped(v.Arguments[0]) {
			v.Arguments[0] = wrap("_list", nil, v.Arguments[0])
		}
		if len(v.Arguments) > 1 && predicates[v.Name] {
			if p, ok := v.Arguments[1].(*ast.PredicateNode); ok {
				p.Node = truthOf(p.Node)
			}
		}
	}
}

// bodyType is the type of a body (req, resp) and of a struct in it.
var bodyType = reflect.TypeFor[map[string]any]()

// truthOf wraps n in a call of _truth when its type is not known to be a boolean.
func truthOf(n ast.Node) ast.Node {
	if untyped(n) {
		return wrap("_truth", boolType, n)
	}
	return n
}

// call replaces the node at n by a call of fn with args.
func call(n *ast.Node, fn string, typ reflect.Type, args ...ast.Node) {
	ast.Patch(n, wrap(fn, typ, args...))
}

// wrap is a call of fn with args, placed where the first argument is; typ, when known, is the
// type of its result, for the nodes above it (the checker sets it again afterwards).
func wrap(fn string, typ reflect.Type, args ...ast.Node) ast.Node {
	c := &ast.CallNode{Callee: &ast.IdentifierNode{Value: fn}, Arguments: args}
	c.SetLocation(args[0].Location())
	if typ != nil {
		c.SetType(typ)
	}
	return c
}

// untyped reports whether the checker knows no type for n beyond interface{}.
func untyped(n ast.Node) bool {
	t := n.Type()
	return t == nil || t.Kind() == reflect.Interface
}
