package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/kdissect/kdissect/internal/testutil"
	flag "github.com/spf13/pflag"
)

// The documentation is README.md and the pages in docs/, read from the repository's root.
const repoRoot = "../.."

// docFiles lists README.md and docs/*.md, relative to the repository's root.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in docs/ (%v)", err)
	}
	files := []string{"README.md"}
	for _, p := range pages {
		files = append(files, filepath.ToSlash(strings.TrimPrefix(p, repoRoot+string(filepath.Separator))))
	}
	return files
}

// readDoc reads a file of the documentation by its path from the repository's root.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docBlock is one fenced code block of a page: its lines, and the line of the page (from 1)
// that opens it.
type docBlock struct {
	line  int
	lines []string
}

// codeBlocks returns the fenced code blocks of a page, and the page's lines outside them.
func codeBlocks(text string) (blocks []docBlock, prose []string) {
	var cur *docBlock
	for i, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "```") && cur == nil:
			cur = &docBlock{line: i + 1}
			prose = append(prose, "")
		case strings.HasPrefix(l, "```"):
			blocks = append(blocks, *cur)
			cur = nil
			prose = append(prose, "")
		case cur != nil:
			cur.lines = append(cur.lines, l)
			prose = append(prose, "")
		default:
			prose = append(prose, l)
		}
	}
	return blocks, prose
}

// shellWords splits a command line as a POSIX shell does for the commands the pages show:
// words separated by blanks, single and double quotes, and a # that starts a comment.
func shellWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
			continue
		case c == '#' && !inWord:
			return words, nil
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("unclosed %c in %q", c, line)
			}
			w.WriteString(line[i+1 : i+1+end])
			i += end + 1
		case c == '\\' || c == '|' || c == '>' || c == '<' || c == '&' || c == ';' || c == '$' || c == '`':
			return nil, fmt.Errorf("%q: only plain words and quotes are run", line)
		default:
			w.WriteByte(c)
		}
		inWord = true
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// docCommand is a command shown in a page, on a line "$ kdissect ...", and the output shown
// under it.
type docCommand struct {
	file, line string
	at         int // the line of the page holding the command, from 1
	want       []string
}

// docCommands finds the kdissect commands the pages show with their output: a code block of
// lines that start with "$ ", each followed by what it prints.
func docCommands(t *testing.T, file, text string) []docCommand {
	blocks, _ := codeBlocks(text)
	var cmds []docCommand
	for _, b := range blocks {
		if len(b.lines) == 0 || !strings.HasPrefix(b.lines[0], "$ ") {
			continue
		}
		for i, l := range b.lines {
			if cmd, ok := strings.CutPrefix(l, "$ "); ok {
				if !strings.HasPrefix(cmd, "kdissect ") {
					t.Errorf("%s:%d: %q: only kdissect commands are shown with their output", file, b.line+1+i, cmd)
				}
				cmds = append(cmds, docCommand{file: file, line: cmd, at: b.line + 1 + i})
				continue
			}
			c := &cmds[len(cmds)-1]
			c.want = append(c.want, l)
		}
	}
	return cmds
}

// inRepoCopy makes a directory whose entries are links to those of the repository (at root,
// an absolute path), and makes it the test's working directory, so that the pages' commands
// name pcaps/ as they do from the root and the files they write go to a temporary directory.
func inRepoCopy(t *testing.T, root string) {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
}

// excerptMatches says whether got holds want, where want may leave lines out: a line "…"
// stands for any number of lines; the other lines must be got's, in order and together.
func excerptMatches(got, want []string) bool {
	var parts [][]string
	cur := []string{}
	for _, l := range want {
		if l == "…" {
			parts = append(parts, cur)
			cur = []string{}
			continue
		}
		cur = append(cur, l)
	}
	parts = append(parts, cur)
	if len(parts) == 1 {
		return slices.Equal(got, want)
	}
	first, last := parts[0], parts[len(parts)-1]
	if len(got) < len(first)+len(last) || !slices.Equal(got[:len(first)], first) || !slices.Equal(got[len(got)-len(last):], last) {
		return false
	}
	rest := got[len(first) : len(got)-len(last)]
	for _, p := range parts[1 : len(parts)-1] {
		i := indexLines(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return true
}

// indexLines is the index of the first run of lines in s equal to sub, or -1.
func indexLines(s, sub []string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if slices.Equal(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// TestDocExamples runs every kdissect command the README and docs/ show with its output
// ("$ kdissect ..." in a code block, from the repository's root) and requires the output
// shown: all of it, or the lines shown in order where "…" leaves some out. With -update, the
// outputs shown in full are rewritten from the code's.
func TestDocExamples(t *testing.T) {
	files := docFiles(t)
	texts := map[string]string{}
	var cmds []docCommand
	for _, f := range files {
		texts[f] = readDoc(t, f)
		cmds = append(cmds, docCommands(t, f, texts[f])...)
	}
	if len(cmds) < 8 {
		t.Fatalf("only %d commands shown with their output", len(cmds))
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	inRepoCopy(t, root)
	outputs := map[string]string{} // a command's line -> its output, for -update
	for _, c := range cmds {
		words, err := shellWords(c.line)
		if err != nil {
			t.Errorf("%s:%d: %v", c.file, c.at, err)
			continue
		}
		stdout, stderr, code := kdissect(t, words[1:]...)
		if code != 0 {
			t.Errorf("%s:%d: %s: exit status %d\n%s", c.file, c.at, c.line, code, stderr)
			continue
		}
		got := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
		if stdout == "" {
			got = nil
		}
		outputs[c.line] = stdout
		if slices.Contains(c.want, "…") {
			if !excerptMatches(got, c.want) {
				t.Errorf("%s:%d: %s: the lines shown are not the output's, in order:\nshown:\n%s\noutput:\n%s", c.file, c.at, c.line, strings.Join(c.want, "\n"), stdout)
			}
		} else if !slices.Equal(got, c.want) && !*update {
			line, g, w := testutil.FirstDiff(strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			t.Errorf("%s:%d: %s: the output differs from the page's at its line %d:\n got: %s\nshown: %s\n(go test ./cmd/kdissect -run TestDocExamples -update rewrites it)", c.file, c.at, c.line, line, g, w)
		}
	}
	if *update {
		for _, f := range files {
			rewriteOutputs(t, filepath.Join(root, f), texts[f], outputs)
		}
	}
}

// rewriteOutputs writes into a page (at path) the outputs of its commands shown in full.
func rewriteOutputs(t *testing.T, path, text string, outputs map[string]string) {
	lines := strings.Split(text, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i])
		cmd, ok := strings.CutPrefix(lines[i], "$ ")
		stdout, ran := outputs[cmd]
		if !ok || !ran {
			continue
		}
		j := i + 1
		for j < len(lines) && !strings.HasPrefix(lines[j], "$ ") && !strings.HasPrefix(lines[j], "```") {
			j++
		}
		if slices.Contains(lines[i+1:j], "…") {
			continue // an excerpt: the test has said whether it still holds
		}
		if stdout != "" {
			out = append(out, strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")...)
		}
		i = j - 1
	}
	updated := strings.Join(out, "\n")
	if updated != text {
		if err := os.WriteFile(path, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestREADMEFirstCommands: the README opens with the two commands a newcomer needs, one
// dissecting a capture shipped here (whose output the README shows, checked by
// TestDocExamples) and one running the tests.
func TestREADMEFirstCommands(t *testing.T) {
	text := readDoc(t, "README.md")
	blocks, _ := codeBlocks(text)
	if len(blocks) == 0 || len(blocks[0].lines) != 2 || blocks[0].line > 3 {
		t.Fatal("README.md does not open with a block of two commands")
	}
	run, _, _ := strings.Cut(blocks[0].lines[0], "#")
	args, ok := strings.CutPrefix(strings.TrimSpace(run), "go run ./cmd/kdissect ")
	if !ok || !strings.Contains(args, " pcaps/") {
		t.Errorf("the README's first command does not run kdissect on a capture in pcaps/: %q", blocks[0].lines[0])
	}
	if _, err := os.Stat(filepath.Join(repoRoot, args[strings.LastIndex(args, " ")+1:])); err != nil {
		t.Errorf("the README's first command: %v", err)
	}
	if !slices.ContainsFunc(docCommands(t, "README.md", text), func(c docCommand) bool { return c.line == "kdissect "+args && len(c.want) > 0 }) {
		t.Errorf("the README does not show the output of its first command (a block with \"$ kdissect %s\")", args)
	}
	if test, _, _ := strings.Cut(blocks[0].lines[1], "#"); strings.TrimSpace(test) != "go test ./..." {
		t.Errorf("the README's second command is %q, want go test ./...", blocks[0].lines[1])
	}
	if n := strings.Count(text, "\n"); n >= 250 {
		t.Errorf("README.md has %d lines: a newcomer's page is short, the reference goes to docs/", n)
	}
}

// link is a Markdown link or image: [text](target).
var link = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)

// inlineCode is a code span, whose brackets are not links.
var inlineCode = regexp.MustCompile("`[^`]*`")

// TestDocLinks: every relative link of the README and docs/ names a file that exists, and an
// anchor a heading of that page makes; every page of docs/ is linked from the README.
func TestDocLinks(t *testing.T) {
	files := docFiles(t)
	anchors := map[string]map[string]bool{}
	for _, f := range files {
		anchors[f] = headingAnchors(readDoc(t, f))
	}
	linked := map[string]bool{}
	for _, f := range files {
		_, prose := codeBlocks(readDoc(t, f))
		// Code spans become blanks of their length, so that offsets still give lines; a
		// link may be written over two lines.
		text := inlineCode.ReplaceAllStringFunc(strings.Join(prose, "\n"), func(s string) string {
			return strings.Map(func(r rune) rune {
				if r == '\n' {
					return r
				}
				return ' '
			}, s)
		})
		for _, m := range link.FindAllStringSubmatchIndex(text, -1) {
			target := text[m[2]:m[3]]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			dest := checkLink(t, anchors, fmt.Sprintf("%s:%d", f, strings.Count(text[:m[0]], "\n")+1), f, target)
			if f == "README.md" {
				linked[dest] = true
			}
		}
	}
	for _, f := range files[1:] {
		if !linked[f] {
			t.Errorf("%s is not linked from README.md", f)
		}
	}
}

// checkLink reports a relative link of page f (at, its place) whose file or anchor does
// not exist, and returns the page or file it names, relative to the repository's root.
func checkLink(t *testing.T, anchors map[string]map[string]bool, at, f, target string) string {
	t.Helper()
	path, anchor, _ := strings.Cut(target, "#")
	dest := f
	if path != "" {
		dest = filepath.ToSlash(filepath.Join(filepath.Dir(f), path))
		if _, err := os.Stat(filepath.Join(repoRoot, dest)); err != nil {
			t.Errorf("%s: link %s: no file %s", at, target, dest)
			return dest
		}
	}
	if a, ok := anchors[dest]; anchor != "" && !ok {
		t.Errorf("%s: link %s: an anchor into a file that is not a page", at, target)
	} else if anchor != "" && !a[anchor] {
		t.Errorf("%s: link %s: no heading of %s makes the anchor #%s", at, target, dest, anchor)
	}
	return dest
}

// headingAnchors returns the anchors a page's headings make, as GitHub makes them: the
// heading's text in lower case, without punctuation, blanks made dashes, and -1, -2, ...
// after the second and later headings of the same text.
func headingAnchors(text string) map[string]bool {
	_, prose := codeBlocks(text)
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range prose {
		h := strings.TrimLeft(l, "#")
		if h == l || !strings.HasPrefix(h, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// needs names what a test skips without: a program it runs or the privilege it uses.
type needs string

const (
	skipChromium needs = "chromium"
	skipTshark   needs = "tshark"
	skipRoot     needs = "root"
)

// skipNeeds finds what each function of a package's test files skips without, directly:
// chromium when it starts one through internal/browsertest (which skips without it); tshark
// or root when an if statement that looks tshark up or asks for the effective user id skips
// the test. It also returns the functions each calls, by name.
func skipNeeds(files []*ast.File) (map[string]map[needs]bool, map[string][]string) {
	direct := map[string]map[needs]bool{}
	calls := map[string][]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := fn.Name.Name
			direct[name] = map[needs]bool{}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					switch fun := n.Fun.(type) {
					case *ast.Ident:
						calls[name] = append(calls[name], fun.Name)
					case *ast.SelectorExpr:
						if x, ok := fun.X.(*ast.Ident); ok && x.Name == "browsertest" && (fun.Sel.Name == "Start" || fun.Sel.Name == "Path") {
							direct[name][skipChromium] = true
						}
						if x, ok := fun.X.(*ast.Ident); ok && x.Name == "testutil" && fun.Sel.Name == "NeedRoot" {
							direct[name][skipRoot] = true
						}
						calls[name] = append(calls[name], fun.Sel.Name)
					}
				case *ast.IfStmt:
					if need, ok := skippingIf(n); ok {
						direct[name][need] = true
					}
				}
				return true
			})
		}
	}
	return direct, calls
}

// skippingIf says whether an if statement skips the test when tshark is not found or the
// user is not root, and which.
func skippingIf(n *ast.IfStmt) (needs, bool) {
	var need needs
	cond := []ast.Stmt{&ast.ExprStmt{X: n.Cond}}
	if n.Init != nil {
		cond = append(cond, n.Init)
	}
	ast.Inspect(&ast.BlockStmt{List: cond}, func(m ast.Node) bool {
		c, ok := m.(*ast.CallExpr)
		if !ok {
			return true
		}
		if s, ok := c.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Geteuid" {
			need = skipRoot
		} else if ok && s.Sel.Name == "LookPath" && len(c.Args) == 1 {
			if lit, ok := c.Args[0].(*ast.BasicLit); ok && lit.Value == `"tshark"` {
				need = skipTshark
			}
		}
		return true
	})
	skips := false
	ast.Inspect(n.Body, func(m ast.Node) bool {
		if c, ok := m.(*ast.CallExpr); ok {
			if s, ok := c.Fun.(*ast.SelectorExpr); ok && strings.HasPrefix(s.Sel.Name, "Skip") {
				skips = true
			}
		}
		return true
	})
	return need, need != "" && skips
}

// skippingTests lists, for each package of the module with tests, the tests that skip
// without chromium, tshark or root, directly or through the functions they call: "need
// package TestName".
func skippingTests(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(repoRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != repoRoot || filepath.Base(path) == "browsertest" {
			return nil
		}
		tests, _ := filepath.Glob(filepath.Join(path, "*_test.go"))
		var files []*ast.File
		for _, file := range tests {
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			files = append(files, f)
		}
		pkg := filepath.ToSlash(strings.TrimPrefix(path, repoRoot+"/"))
		direct, calls := skipNeeds(files)
		for name := range direct {
			if !strings.HasPrefix(name, "Test") {
				continue
			}
			for need := range reachedNeeds(name, direct, calls) {
				out = append(out, fmt.Sprintf("%s %s %s", need, pkg, name))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// reachedNeeds is what a function skips without, itself or through what it calls.
func reachedNeeds(name string, direct map[string]map[needs]bool, calls map[string][]string) map[needs]bool {
	out := map[needs]bool{}
	seen := map[string]bool{name: true}
	queue := []string{name}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		for n := range direct[f] {
			out[n] = true
		}
		for _, c := range calls[f] {
			if !seen[c] {
				seen[c] = true
				queue = append(queue, c)
			}
		}
	}
	return out
}

// TestSkipList: docs/testing.md lists every test that skips without chromium, tshark or root,
// as the test files say: in a table of rows "| need | `package` | `TestA`, `TestB` |".
func TestSkipList(t *testing.T) {
	got := skippingTests(t)
	if len(got) < 10 {
		t.Fatalf("only %d tests found that skip without chromium, tshark or root", len(got))
	}
	text := readDoc(t, "docs/testing.md")
	row := regexp.MustCompile("(?m)^\\| (chromium|tshark|root) \\| `([^`]+)` \\| (.*) \\|$")
	var listed []string
	for _, m := range row.FindAllStringSubmatch(text, -1) {
		for _, name := range regexp.MustCompile("`(Test[A-Za-z0-9_]+)`").FindAllStringSubmatch(m[3], -1) {
			listed = append(listed, fmt.Sprintf("%s %s %s", m[1], m[2], name[1]))
		}
	}
	slices.Sort(listed)
	if !slices.Equal(got, listed) {
		t.Errorf("docs/testing.md lists these tests as skipping:\n%s\nthe test files say, as rows of its table:\n%s", strings.Join(listed, "\n"), skipTable(got))
	}
}

// skipTable writes the rows of docs/testing.md's table for the tests that skip.
func skipTable(tests []string) string {
	var b strings.Builder
	var prev string
	for _, s := range tests {
		f := strings.Fields(s)
		if key := f[0] + " " + f[1]; key != prev {
			if prev != "" {
				b.WriteString(" |\n")
			}
			fmt.Fprintf(&b, "| %s | `%s` | `%s`", f[0], f[1], f[2])
			prev = key
		} else {
			fmt.Fprintf(&b, ", `%s`", f[2])
		}
	}
	if prev != "" {
		b.WriteString(" |\n")
	}
	return b.String()
}

// TestFlagsDocumented: docs/usage.md's table of flags names every flag of the capture command
// that --help shows, and no flag that does not exist.
func TestFlagsDocumented(t *testing.T) {
	text := readDoc(t, "docs/usage.md")
	_, table, ok := strings.Cut(text, "| flag | meaning |\n| --- | --- |\n")
	table, _, _ = strings.Cut(table, "\n\n")
	if !ok {
		t.Fatal("docs/usage.md has no table of flags")
	}
	name := regexp.MustCompile(`(?:^|[^-\w])--([a-z][a-z-]*)`)
	fs, _ := captureFlags()
	mentioned := map[string]bool{}
	for _, row := range strings.Split(table, "\n") {
		cells := strings.Split(strings.ReplaceAll(row, `\|`, "/"), " | ")
		for _, m := range name.FindAllStringSubmatch(row, -1) {
			mentioned[m[1]] = true
		}
		for _, m := range name.FindAllStringSubmatch(cells[0], -1) {
			if fs.Lookup(m[1]) == nil {
				t.Errorf("docs/usage.md: --%s is not a flag", m[1])
			}
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if !f.Hidden && !mentioned[f.Name] {
			t.Errorf("docs/usage.md's table of flags does not name --%s", f.Name)
		}
	})
}
