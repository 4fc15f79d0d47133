package browser

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// AXNode is a node of Chromium's accessibility tree, the tree a screen
// reader reads: its computed role, name and description, its properties
// (aria-invalid, live, modal, focused, level...) as text, and its
// children.
type AXNode struct {
	Role, Name, Description string
	Props                   map[string]string
	Children                []*AXNode
	Ignored                 bool
	// DOMNode is the element (or text) the node stands for, for
	// DOMAttributes.
	DOMNode cdp.BackendNodeID
}

// Text is what a screen reader reads inside n: the names of the text
// nodes under it, joined by spaces.
func (n *AXNode) Text() string {
	var parts []string
	var walk func(*AXNode)
	walk = func(n *AXNode) {
		if n.Role == "StaticText" && n.Name != "" {
			parts = append(parts, n.Name)
			return
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(parts, " ")
}

// Find returns the nodes under n (n included, ignored nodes left out) with
// role, in document order.
func (n *AXNode) Find(role string) []*AXNode {
	var out []*AXNode
	var walk func(*AXNode)
	walk = func(n *AXNode) {
		if !n.Ignored && n.Role == role {
			out = append(out, n)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(n)
	return out
}

// Names returns the names of the nodes under n with role.
func (n *AXNode) Names(role string) []string {
	found := n.Find(role)
	out := make([]string, 0, len(found))
	for _, c := range found {
		out = append(out, c.Name)
	}
	return out
}

// AXTree returns the page's whole accessibility tree
// (Accessibility.getFullAXTree), its root first.
func AXTree(t testing.TB, ctx context.Context) *AXNode {
	t.Helper()
	res, err := chromedp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		t.Fatalf("read the accessibility tree: %v", err)
	}
	byID := map[accessibility.NodeID]*AXNode{}
	for _, n := range res.Nodes {
		byID[n.NodeID] = convert(n)
	}
	var root *AXNode
	for _, n := range res.Nodes {
		if n.ParentID == "" && root == nil {
			root = byID[n.NodeID]
		}
		for _, c := range n.ChildIDs {
			if cn := byID[c]; cn != nil {
				byID[n.NodeID].Children = append(byID[n.NodeID].Children, cn)
			}
		}
	}
	if root == nil {
		t.Fatal("the accessibility tree is empty")
	}
	return root
}

// axOf returns the accessibility node of the element expr evaluates to
// (Accessibility.getPartialAXTree), or nil when it has none.
func axOf(t testing.TB, ctx context.Context, expr string) *AXNode {
	t.Helper()
	obj, err := chromedp.Run(ctx, chromedp.Evaluate[*runtime.RemoteObject](expr))
	if err != nil || obj == nil || obj.ObjectID == "" {
		t.Fatalf("find %s: %v", expr, err)
	}
	defer func() {
		_, _ = chromedp.Call(ctx, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: obj.ObjectID})
	}()
	res, err := chromedp.Call(ctx, accessibility.GetPartialAXTree, accessibility.GetPartialAXTreeParams{ObjectID: obj.ObjectID, FetchRelatives: new(false)})
	if err != nil {
		t.Fatalf("read the accessibility node of %s: %v", expr, err)
	}
	if len(res.Nodes) == 0 {
		return nil
	}
	return convert(res.Nodes[0])
}

// AXOf returns the accessibility node of the element a JavaScript
// expression evaluates to.
func AXOf(t testing.TB, ctx context.Context, expr string) *AXNode {
	t.Helper()
	return axOf(t, ctx, expr)
}

// DOMAttributes returns the attributes of the element n stands for. Some
// ARIA states reach a screen reader without being in the Accessibility
// domain's properties: Chromium 156 has no property for aria-current (its
// AXPropertyName list lacks one), though it keeps an element with it as a
// node of its own; the attribute on that node's element is what the
// screen reader is given.
func DOMAttributes(t testing.TB, ctx context.Context, n *AXNode) map[string]string {
	t.Helper()
	if n.DOMNode == 0 {
		t.Fatalf("the accessibility node %s %q stands for no DOM node", n.Role, n.Name)
	}
	res, err := chromedp.Call(ctx, dom.DescribeNode, dom.DescribeNodeParams{BackendNodeID: n.DOMNode})
	if err != nil {
		t.Fatalf("describe the DOM node of %s %q: %v", n.Role, n.Name, err)
	}
	attrs := map[string]string{}
	for i := 0; i+1 < len(res.Node.Attributes); i += 2 {
		attrs[res.Node.Attributes[i]] = res.Node.Attributes[i+1]
	}
	return attrs
}

func convert(n *accessibility.Node) *AXNode {
	out := &AXNode{Role: valueText(n.Role), Name: valueText(n.Name), Description: valueText(n.Description), Ignored: n.Ignored, Props: map[string]string{}, DOMNode: n.BackendDOMNodeID}
	for _, p := range n.Properties {
		out.Props[string(p.Name)] = valueText(p.Value)
	}
	return out
}

// valueText is an AX value as text: strings unquoted, others as JSON.
func valueText(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s string
	if err := json.Unmarshal(v.Value, &s); err == nil {
		return s
	}
	return string(v.Value)
}
