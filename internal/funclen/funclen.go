// Package funclen finds the functions of a Go source tree that are too long to read at once.
// kdissect keeps every function outside tests and generated code at 80 lines or fewer; its
// test holds the module to that.
package funclen

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Func is a function and its length in lines, from its signature to its closing brace.
type Func struct {
	Pos   token.Position
	Name  string // Name or Recv.Name
	Lines int
}

// Long returns the functions of the .go files under root that have more than max lines, in
// file order. Test files, testdata folders and files marked "Code generated" are left out.
func Long(root string, max int) ([]Func, error) {
	var long []Func
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != root):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go"):
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil || bytes.Contains(src, []byte("\n// Code generated ")) || bytes.HasPrefix(src, []byte("// Code generated ")) {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil {
				start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
				if n := end.Line - start.Line + 1; n > max {
					long = append(long, Func{Pos: start, Name: funcName(fd), Lines: n})
				}
			}
		}
		return nil
	})
	return long, err
}

// funcName is a function's name, with its receiver's type for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
