package browser

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The keys a keyboard-only test presses, as chromedp.KeyEvent takes them:
// each is sent as keyDown, char (printable keys only) and keyUp through
// Input.dispatchKeyEvent, as a physical keyboard's would be.
const (
	KeyTab       = kb.Tab
	KeyEnter     = kb.Enter
	KeyEscape    = kb.Escape
	KeySpace     = " "
	KeyArrowDown = kb.ArrowDown
	KeyArrowUp   = kb.ArrowUp
	KeyBackspace = kb.Backspace
)

// Press sends keys to whatever has the focus, with modifiers held.
func Press(keys string, mods ...chromedp.Modifier) chromedp.Action[chromedp.Void] {
	if len(mods) == 0 {
		return chromedp.KeyEvent(keys)
	}
	return chromedp.KeyEvent(keys, chromedp.KeyModifiers(mods...))
}

// ShiftTab moves the focus back one stop.
func ShiftTab() chromedp.Action[chromedp.Void] { return Press(KeyTab, chromedp.ModifierShift) }

// SelectAll selects the focused field's text (Ctrl+A), so what is typed
// next replaces it.
func SelectAll() chromedp.Action[chromedp.Void] { return Press("a", chromedp.ModifierCtrl) }

// Focus is what has the keyboard focus: the element as the page has it
// and as Chromium's accessibility tree (what a screen reader reads) names
// it.
type Focus struct {
	// Tag is the element's tag name in lower case ("body": nothing has
	// the focus); ID and Test are its id and data-test attributes.
	Tag, ID, Test string
	// Region is where it is: "dialog" (in an open <dialog>), "header",
	// "main", "skip" (the skip link) or "other".
	Region string
	// Indicator is the focus indicator drawn for it, from the computed
	// style (the outline, else the box-shadow); "" when there is none.
	Indicator string
	// Contrast is the outline's contrast ratio with the background behind
	// it (WCAG 2's formula; 0 without an outline).
	Contrast float64
	// OnScreen: its box is at least 2x2 pixels and inside the viewport.
	OnScreen bool
	// Role, Name and Description are the accessibility tree's; Invalid
	// its aria-invalid state.
	Role, Name, Description string
	Invalid                 bool
	// Props are its other accessibility properties as text (expanded,
	// checked, ...).
	Props map[string]string
}

func (f Focus) String() string {
	return fmt.Sprintf("%s %q (<%s id=%q data-test=%q> in %s, indicator %q, contrast %.2f)", f.Role, f.Name, f.Tag, f.ID, f.Test, f.Region, f.Indicator, f.Contrast)
}

// focusedDOM describes document.activeElement from the page's side.
const focusedDOM = `(() => {
  const e = document.activeElement || document.body;
  const s = getComputedStyle(e);
  const outline = s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0 ? s.outlineStyle + ' ' + s.outlineWidth + ' ' + s.outlineColor : '';
  const shadow = s.boxShadow && s.boxShadow !== 'none' ? s.boxShadow : '';
  // The indicator's contrast with what is behind it: the outline (drawn
  // outside the element, with outline-offset) against the nearest
  // ancestor's background colour, white when none sets one.
  const rgb = (c) => (c.match(/[\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((a, v, i) => a + v * [0.2126, 0.7152, 0.0722][i], 0);
  let bg = [255, 255, 255];
  for (let p = e.parentElement; p; p = p.parentElement) {
    const c = rgb(getComputedStyle(p).backgroundColor);
    if (c.length >= 3 && (c.length < 4 || c[3] > 0)) { bg = c; break; }
  }
  const fg = outline ? rgb(s.outlineColor) : [];
  const [hi, lo] = fg.length >= 3 ? [lum(fg), lum(bg)].sort((a, b) => b - a) : [0, 0];
  const contrast = fg.length >= 3 ? (hi + 0.05) / (lo + 0.05) : 0;
  const r = e.getBoundingClientRect();
  const region = e.closest('dialog[open]') ? 'dialog' : e.classList.contains('skip') ? 'skip'
    : e.closest('header') ? 'header' : e.closest('main') ? 'main' : 'other';
  return {tag: e.tagName.toLowerCase(), id: e.id, test: e.dataset.test || '', region,
    indicator: outline || shadow, contrast,
    onScreen: r.width >= 2 && r.height >= 2 && r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth};
})()`

// Focused returns what has the focus now.
func Focused(t testing.TB, ctx context.Context) Focus {
	t.Helper()
	type domFocus struct {
		Tag, ID, Test, Region, Indicator string
		Contrast                         float64
		OnScreen                         bool
	}
	var dom domFocus
	Run(t, ctx, "read the focus", Into(chromedp.Evaluate[domFocus](focusedDOM), &dom))
	f := Focus{Tag: dom.Tag, ID: dom.ID, Test: dom.Test, Region: dom.Region, Indicator: dom.Indicator, Contrast: dom.Contrast, OnScreen: dom.OnScreen}
	if n := axOf(t, ctx, "document.activeElement || document.body"); n != nil {
		f.Role, f.Name, f.Description = n.Role, n.Name, n.Description
		f.Invalid = n.Props["invalid"] == "true"
		f.Props = n.Props
	}
	return f
}

// Stop presses keys and returns where the focus lands, failing t unless
// it landed on an element with a role, an accessible name, a focus
// indicator and a box on screen: a stop a keyboard user can see and a
// screen reader can name.
func Stop(t testing.TB, ctx context.Context, what string, keys ...chromedp.Action[chromedp.Void]) Focus {
	t.Helper()
	Run(t, ctx, what, keys...)
	f := Focused(t, ctx)
	CheckStop(t, what, f)
	return f
}

// CheckStop fails t unless f is a focus stop that shows (an outline of at
// least 3:1 contrast, or a box-shadow, on screen) and has a name.
func CheckStop(t testing.TB, what string, f Focus) {
	t.Helper()
	if f.Tag == "body" {
		t.Errorf("%s: nothing has the focus", what)
		return
	}
	if f.Name == "" {
		t.Errorf("%s: the focused %s has no accessible name", what, f)
	}
	if f.Indicator == "" {
		t.Errorf("%s: the focused %s has no visible focus indicator (outline and box-shadow none)", what, f)
	}
	// WCAG 2.2's 1.4.11 asks 3:1 of the parts of a control needed to see
	// its state; the focus indicator is one.
	if f.Indicator != "" && f.Contrast < 3 {
		t.Errorf("%s: the focused %s has a focus indicator of contrast %.2f:1 with its background, under 3:1", what, f, f.Contrast)
	}
	if !f.OnScreen {
		t.Errorf("%s: the focused %s is not on screen", what, f)
	}
}

// TabAround presses Tab from where the focus is until it leaves the page
// (or comes back to where it started), at most max times, checking every
// stop (CheckStop) and returning them in order.
func TabAround(t testing.TB, ctx context.Context, max int) []Focus {
	t.Helper()
	var stops []Focus
	start := Focused(t, ctx)
	for i := range max {
		Run(t, ctx, "Tab", Press(KeyTab))
		f := Focused(t, ctx)
		if f.Tag == "body" || (f.Tag == start.Tag && f.ID == start.ID && f.Name == start.Name && f.Region == start.Region && i > 0) {
			return stops
		}
		CheckStop(t, fmt.Sprintf("Tab %d", i+1), f)
		stops = append(stops, f)
	}
	t.Fatalf("the focus did not leave the page after %d Tabs; the last stops: %v", max, stops[len(stops)-min(5, len(stops)):])
	return nil
}

// TabTo presses Tab until the focus is on the element whose accessible
// name is name, at most max times, checking every stop on the way.
func TabTo(t testing.TB, ctx context.Context, name string, max int) Focus {
	t.Helper()
	return moveTo(t, ctx, "Tab", Press(KeyTab), name, max)
}

// ShiftTabTo is TabTo backwards, with Shift+Tab.
func ShiftTabTo(t testing.TB, ctx context.Context, name string, max int) Focus {
	t.Helper()
	return moveTo(t, ctx, "Shift+Tab", ShiftTab(), name, max)
}

// moveTo presses key (called keyName) until the focus is on name.
func moveTo(t testing.TB, ctx context.Context, keyName string, key chromedp.Action[chromedp.Void], name string, max int) Focus {
	t.Helper()
	var seen []string
	for i := range max {
		f := Stop(t, ctx, fmt.Sprintf("%s %d towards %q", keyName, i+1, name), key)
		if f.Name == name {
			return f
		}
		seen = append(seen, f.Role+" "+f.Name)
	}
	t.Fatalf("%q not reached in %d presses of %s; passed %q", name, max, keyName, seen)
	return Focus{}
}
