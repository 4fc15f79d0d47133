package controllers_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

var errNotTable = errors.New("the health script did not return a table")

// healthScript reads the Argo CD health script of kind from config/argocd,
// laid out as Argo CD's resource_customizations (<group>/<kind>/health.lua).
func healthScript(kind string) (string, error) {
	b, err := os.ReadFile(filepath.Join("..", "config", "argocd", kurzv1alpha1.GroupVersion.Group, kind, "health.lua"))
	return string(b), err
}

// toLua converts an unstructured value to Lua as Argo CD does: maps to
// tables keyed by string, slices to 1-based array tables, every number
// (int64 from the API server's JSON, float64) to a Lua number, and anything
// else to nil.
func toLua(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case []any:
		t := l.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(toLua(l, item))
		}
		return t
	case map[string]any:
		t := l.CreateTable(0, len(v))
		for k, item := range v {
			t.RawSetString(k, toLua(l, item))
		}
		return t
	}
	return lua.LNil
}

// BenchmarkArgoCDLinkHealth is what Argo CD spends on a Link's health: a
// fresh VM, the object converted and the (cached) script run, as on every
// refresh of a Link it tracks.
func BenchmarkArgoCDLinkHealth(b *testing.B) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kurz.dev/v1alpha1", "kind": "Link",
		"metadata": map[string]any{"name": "docs", "namespace": "team-a", "generation": int64(3)},
		"spec":     map[string]any{"domain": "go.example.com", "key": "docs", "url": "https://example.com/docs"},
		"status": map[string]any{"observedGeneration": int64(3), "clicks": int64(42), "conditions": []any{
			map[string]any{"type": "Ready", "status": "True", "reason": "Active", "message": "The link serves https://go.example.com/docs"},
		}},
	}}
	script, err := healthScript("Link")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		st, _, err := runHealth(script, u)
		if err != nil || st != "Healthy" {
			b.Fatalf("%q, %v", st, err)
		}
	}
}
