// Command apiscan lists, for each public package of the module (those outside internal/, cmd/
// and test/), the exported top-level names (functions, types, variables, constants) that no
// other package uses: candidates to unexport, or to move behind internal/. Uses by _test.go
// files of other packages are counted apart, since a name a test needs may still belong
// inside.
//
//	go run ./internal/apiscan [-all] [ROOT]
//
// Names are matched syntactically: a use is a selector pkg.Name through an import of the
// package. Methods and struct fields are not scanned (telling them apart needs types).
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

func main() {
	all := flag.Bool("all", false, "list every exported name with its uses, not only the unused ones")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	if err := run(root, *all, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "apiscan: %v\n", err)
		os.Exit(1)
	}
}

// pkg is one directory's package: its import path, its exported names, and the uses of them
// from other packages.
type pkg struct {
	path     string
	public   bool
	exported map[string]string // name -> kind
	uses     map[string]int    // by non-test files of other packages
	testUses map[string]int    // by _test.go files of other packages
}

func run(root string, all bool, w io.Writer) error {
	module, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return err
	}
	pkgs := map[string]*pkg{}
	files := map[string][]*ast.File{} // import path -> its files, tests included
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		ip := path.Join(module, filepath.ToSlash(rel))
		files[ip] = append(files[ip], f)
		if strings.HasSuffix(p, "_test.go") || f.Name.Name == "main" {
			return nil
		}
		k := pkgs[ip]
		if k == nil {
			k = &pkg{path: ip, public: public(module, ip), exported: map[string]string{}, uses: map[string]int{}, testUses: map[string]int{}}
			pkgs[ip] = k
		}
		collect(f, k.exported)
		return nil
	})
	if err != nil {
		return err
	}
	for ip, fs := range files {
		for _, f := range fs {
			test := strings.HasSuffix(fset.File(f.Pos()).Name(), "_test.go")
			countUses(f, ip, test, pkgs)
		}
	}
	report(pkgs, all, w)
	return nil
}

// public says whether a package is outside internal/, cmd/ and test/.
func public(module, ip string) bool {
	rel := strings.TrimPrefix(strings.TrimPrefix(ip, module), "/")
	for _, part := range strings.Split(rel, "/") {
		if part == "internal" || part == "cmd" || part == "test" {
			return false
		}
	}
	return true
}

// collect adds the exported top-level names of f to names.
func collect(f *ast.File, names map[string]string) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.IsExported() {
				names[d.Name.Name] = "func"
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						names[s.Name.Name] = "type"
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							names[n.Name] = strings.ToLower(d.Tok.String())
						}
					}
				}
			}
		}
	}
}

// countUses counts the selectors of f (in package ip) that name an exported name of another
// package of the module it imports. An external test package (pkg_test) counts as outside.
func countUses(f *ast.File, ip string, test bool, pkgs map[string]*pkg) {
	local := map[string]*pkg{} // the name f refers to an imported package by
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		k := pkgs[p]
		if k == nil || p == ip && !strings.HasSuffix(f.Name.Name, "_test") {
			continue
		}
		name := path.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		local[name] = k
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		if k := local[x.Name]; k != nil {
			if _, ok := k.exported[sel.Sel.Name]; ok {
				if test {
					k.testUses[sel.Sel.Name]++
				} else {
					k.uses[sel.Sel.Name]++
				}
			}
		}
		return true
	})
}

func report(pkgs map[string]*pkg, all bool, w io.Writer) {
	var paths []string
	for p, k := range pkgs {
		if k.public {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		k := pkgs[p]
		var names, unused []string
		for n := range k.exported {
			names = append(names, n)
			if k.uses[n] == 0 {
				unused = append(unused, n)
			}
		}
		sort.Strings(names)
		sort.Strings(unused)
		fmt.Fprintf(w, "%s: %d exported, %d used by no other package\n", p, len(names), len(unused))
		list := unused
		if all {
			list = names
		}
		for _, n := range list {
			note := ""
			if t := k.testUses[n]; t > 0 {
				note = fmt.Sprintf(" (tests of other packages: %d)", t)
			}
			if all {
				note = fmt.Sprintf(" %d%s", k.uses[n], note)
			}
			fmt.Fprintf(w, "  %-5s %s%s\n", k.exported[n], n, note)
		}
	}
}

// modulePath reads the module line of go.mod.
func modulePath(gomod string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}
