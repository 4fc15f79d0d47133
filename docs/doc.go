// Package docs holds kurz's documentation pages (Markdown, one per
// concern). It has no code: its test keeps the pages' links true, those of
// README.md and CONTRIBUTING.md too, and each page's contents list.
package docs
