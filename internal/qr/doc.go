// Package qr renders the QR code of a short link (PUT
// /api/v1/links/{id}/qr-code): it reads the request's parameters, draws the
// code as PNG or SVG with exact size, margin and colours, and caches the
// images in a bounded LRU.
package qr
