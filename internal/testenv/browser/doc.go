// Package browser drives headless Chromium for the console's browser tests
// (internal/restapi's TestConsole*, test/e2e's TestConsole against bin/kurz
// dev): it finds Debian's Chromium or skips saying how to install it (fails
// with KURZ_REQUIRE_CHROMIUM=1), runs chromedp actions failing the test with
// what was being done, checks each page with axe-core, saves screenshots
// when asked, and reads back what the page downloads. For keyboard-only
// tests it sends key events, reports what has the focus (its focus
// indicator and its contrast, where it is, its accessible name) and reads
// Chromium's accessibility tree, the tree a screen reader reads. It is imported by
// tests only.
package browser
