package redirect

// dropped counts clicks given up for reason (see clicksDropped); the caller
// logs them.
func (f *flusher) dropped(reason string, clicks int64) {
	if clicks <= 0 {
		return
	}
	clicksDropped.WithLabelValues(reason).Add(float64(clicks))
	f.droppedClicks.Add(clicks)
}
