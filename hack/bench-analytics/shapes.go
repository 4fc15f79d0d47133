package main

import (
	"fmt"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/synth"
)

// shapes counts, without a database, the rows each candidate layout would
// hold for the generated clicks: the figures behind the schema's choice
// (internal/analytics/sqlite's doc).
func shapes(clicks int64, links, days int, seed uint64) {
	start := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -days)
	g := synth.New(synth.Config{Links: links, Clicks: clicks, Days: days, Start: start, Seed: seed})
	type dk struct {
		dev                                analytics.Device
		os, br, cc, ref, usrc, umed, ucamp string
	}
	type ck struct {
		dev        analytics.Device
		os, br, cc string
	}
	type sk struct{ ref, usrc, umed, ucamp string }
	type rk struct {
		l, d    uint32
		m       int64
		visitor uint64
	}
	type lk struct {
		l uint32
		x int64
		d uint32
	}
	type vk struct {
		l   uint32
		dim analytics.Dimension
		v   string
	}
	dims, clients, sources := map[dk]uint32{}, map[ck]struct{}{}, map[sk]struct{}{}
	uid := map[string]uint32{}
	for i, l := range g.Links() {
		uid[l.UID] = uint32(i)
	}
	var raw, linkDays, wsDays, wsValues, linkDayValues, linkHourDims, linkDayDims int
	linkMonths := map[lk]struct{}{}
	perLink := make([]int64, links)
	for d := range days {
		rawm, ld, wd := map[rk]struct{}{}, map[uint32]struct{}{}, map[uint32]struct{}{}
		wv, ldv, lhd, ldd := map[vk]struct{}{}, map[vk]struct{}{}, map[lk]struct{}{}, map[lk]struct{}{}
		g.Day(d, func(e *analytics.Event) {
			k := dk{e.Device, e.OS, e.Browser, e.Country, e.Referrer, e.UTMSource, e.UTMMedium, e.UTMCampaign}
			id, ok := dims[k]
			if !ok {
				id = uint32(len(dims))
				dims[k] = id
			}
			clients[ck{e.Device, e.OS, e.Browser, e.Country}] = struct{}{}
			sources[sk{e.Referrer, e.UTMSource, e.UTMMedium, e.UTMCampaign}] = struct{}{}
			l := uid[e.Link.UID]
			perLink[l]++
			rawm[rk{l, id, e.Minute(), e.Visitor}] = struct{}{}
			ld[l] = struct{}{}
			wd[id] = struct{}{}
			linkMonths[lk{l, int64(e.Time.Month()), id}] = struct{}{}
			lhd[lk{l, int64(e.Time.Hour()), id}] = struct{}{}
			ldd[lk{l, 0, id}] = struct{}{}
			for _, dim := range analytics.Dimensions {
				v := e.Value(dim)
				wv[vk{0, dim, v}] = struct{}{}
				ldv[vk{l, dim, v}] = struct{}{}
			}
		})
		raw += len(rawm)
		linkDays += len(ld)
		wsDays += len(wd)
		wsValues += len(wv)
		linkDayValues += len(ldv)
		linkHourDims += len(lhd)
		linkDayDims += len(ldd)
	}
	var hottest int64
	for _, n := range perLink {
		hottest = max(hottest, n)
	}
	fmt.Printf("| layout (%d clicks, %d days, %d links; hottest link %d clicks) | rows |\n|---|---|\n", clicks, days, links, hottest)
	for _, r := range []struct {
		name string
		n    int
	}{
		{"raw: (link, minute, visitor, all dimensions), counted", raw},
		{"per link and hour, all dimensions (the issue's hourly rollups)", linkHourDims},
		{"per link and day, all dimensions", linkDayDims},
		{"per link, day, one dimension and value", linkDayValues},
		{"per link and month, all dimensions (link_months)", len(linkMonths)},
		{"per link and day (link_days)", linkDays},
		{"per namespace and day, all dimensions (ws_days)", wsDays},
		{"per namespace, day, one dimension and value (ws_values)", wsValues},
		{"dictionary: all eight dimensions (dims)", len(dims)},
		{"dictionary: device, os, browser, country (clients)", len(clients)},
		{"dictionary: referrer and utm (sources)", len(sources)},
	} {
		fmt.Printf("| %s | %d |\n", r.name, r.n)
	}
}
