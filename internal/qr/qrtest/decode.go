// Package qrtest reads back the QR codes kurz draws, for tests.
package qrtest

import (
	"image"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
)

// Decode returns the text of the QR code img shows.
//
// It reads img as a pure barcode: one upright code on a plain background,
// which is what kurz draws. gozxing's default path instead looks for the
// finder patterns as it would in a photograph, and that search misses on
// about one valid code in 750 (4 of 3 000 links of the shape the API tests
// make, every one of which reads as a pure barcode), which made a test that
// uses a random host name fail now and then.
func Decode(img image.Image) (string, error) {
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		return "", err
	}
	hints := map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true}
	res, err := qrcode.NewQRCodeReader().Decode(bmp, hints)
	if err != nil {
		return "", err
	}
	return res.GetText(), nil
}
