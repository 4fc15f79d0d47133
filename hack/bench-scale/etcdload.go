package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kurz-dev/kurz/internal/parallel"
)

// The bulk loader (-loader=etcd) writes Links straight into etcd, as
// kube-apiserver would store them, through etcd's JSON gateway on its
// client URL (/v3/kv/range, /v3/kv/txn): creating a million Links through
// kube-apiserver (about 620/s on two cores) takes half an hour of both
// cores, writing them into etcd a few minutes.
//
// Links 0 and 1 are created through kube-apiserver first. Link 0's stored
// JSON is the template: every other Link is that object with its own name,
// spec, last-applied annotation, uid and timestamps (kube-apiserver stores
// custom resources as JSON with sorted keys, and no resourceVersion, which
// etcd's revision supplies). Before writing anything, Link 1 rendered from
// the template must equal, byte for byte, what kube-apiserver stored for it,
// so a change in what kube-apiserver writes (a defaulted field, managed
// fields) stops the load instead of producing objects it would not have.
// After the load, kube-apiserver must count, get and field-select them.

// etcdBatch is the number of puts per transaction: etcd refuses more than
// --max-txn-ops (128 by default).
const etcdBatch = 128

// etcdWriters is the number of transactions in flight.
const etcdWriters = 4

// linkKeyPrefix is where kube-apiserver keeps the Links of namespace.
const linkKeyPrefix = "/registry/kurz.dev/links/" + namespace + "/"

type etcdKV struct {
	base string // client URL
	hc   *http.Client
}

func (e etcdKV) post(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.hc.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		var msg bytes.Buffer
		_, _ = msg.ReadFrom(resp.Body)
		return fmt.Errorf("etcd %s: %s: %s", path, resp.Status, msg.String())
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// get returns the value stored at key.
func (e etcdKV) get(ctx context.Context, key string) ([]byte, error) {
	var out struct {
		Kvs []struct {
			Value []byte `json:"value"` // base64 in JSON, as encoding/json reads []byte
		} `json:"kvs"`
	}
	if err := e.post(ctx, "/v3/kv/range", map[string]any{"key": []byte(key)}, &out); err != nil {
		return nil, err
	}
	if len(out.Kvs) != 1 {
		return nil, fmt.Errorf("etcd: %s not found", key)
	}
	return out.Kvs[0].Value, nil
}

// putAbsent writes every kv whose key does not exist yet, in one
// transaction when none does.
func (e etcdKV) putAbsent(ctx context.Context, kvs [][2][]byte) error {
	txn := func(kvs [][2][]byte) (bool, error) {
		cmp, put := make([]any, 0, len(kvs)), make([]any, 0, len(kvs))
		for _, kv := range kvs {
			cmp = append(cmp, map[string]any{"key": kv[0], "target": "CREATE", "result": "EQUAL", "create_revision": 0})
			put = append(put, map[string]any{"request_put": map[string]any{"key": kv[0], "value": kv[1]}})
		}
		var out struct {
			Succeeded bool `json:"succeeded"`
		}
		err := e.post(ctx, "/v3/kv/txn", map[string]any{"compare": cmp, "success": put}, &out)
		return out.Succeeded, err
	}
	ok, err := txn(kvs)
	if err != nil || ok || len(kvs) == 1 {
		return err
	}
	for _, kv := range kvs { // some exist (an earlier, interrupted load): one by one
		if _, err := txn([][2][]byte{kv}); err != nil {
			return err
		}
	}
	return nil
}

// linkRenderer makes the stored JSON of Link i from the stored JSON of
// Link 0.
type linkRenderer struct {
	template    []byte
	newline     bool // kube-apiserver's encoder ends the value with one
	lastApplied bool
}

// render returns Link i as kube-apiserver would store it when created at
// created (RFC 3339, seconds) with uid, its managed fields stamped at
// fieldsTime.
func (r linkRenderer) render(i int, uid, created, fieldsTime string) ([]byte, error) {
	obj, err := decodeJSON(r.template)
	if err != nil {
		return nil, err
	}
	want, err := json.Marshal(benchLink(i, r.lastApplied))
	if err != nil {
		return nil, err
	}
	wantObj, err := decodeJSON(want)
	if err != nil {
		return nil, err
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		return nil, errors.New("the template has no metadata")
	}
	wantMeta, _ := wantObj["metadata"].(map[string]any)
	meta["name"], meta["uid"], meta["creationTimestamp"] = wantMeta["name"], uid, created
	if a, ok := wantMeta["annotations"]; ok {
		meta["annotations"] = a
	}
	if mf, ok := meta["managedFields"].([]any); ok {
		for _, e := range mf {
			if m, ok := e.(map[string]any); ok {
				m["time"] = fieldsTime
			}
		}
	}
	// The spec over the template's: fields kube-apiserver defaulted stay.
	spec, _ := obj["spec"].(map[string]any)
	wantSpec, _ := wantObj["spec"].(map[string]any)
	obj["spec"] = overlay(spec, wantSpec)
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	if r.newline {
		out = append(out, '\n')
	}
	return out, nil
}

func decodeJSON(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // integers stay as kube-apiserver wrote them
	var m map[string]any
	return m, d.Decode(&m)
}

// overlay sets every field of top over base, recursing into objects.
func overlay(base, top map[string]any) map[string]any {
	if base == nil {
		return top
	}
	for k, v := range top {
		b, bok := base[k].(map[string]any)
		t, tok := v.(map[string]any)
		if bok && tok {
			base[k] = overlay(b, t)
		} else {
			base[k] = v
		}
	}
	return base
}

// newLinkRenderer reads the stored Links 0 and 1 and checks that the
// template renders Link 1 exactly as kube-apiserver stored it.
func newLinkRenderer(ctx context.Context, kv etcdKV, lastApplied bool) (linkRenderer, error) {
	tmpl, err := kv.get(ctx, linkKeyPrefix+linkName(0))
	if err != nil {
		return linkRenderer{}, err
	}
	r := linkRenderer{template: tmpl, newline: bytes.HasSuffix(tmpl, []byte("\n")), lastApplied: lastApplied}
	stored, err := kv.get(ctx, linkKeyPrefix+linkName(1))
	if err != nil {
		return r, err
	}
	var one struct {
		Metadata struct {
			UID               string `json:"uid"`
			CreationTimestamp string `json:"creationTimestamp"`
			ManagedFields     []struct {
				Time string `json:"time"`
			} `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(stored, &one); err != nil {
		return r, err
	}
	fieldsTime := one.Metadata.CreationTimestamp
	if len(one.Metadata.ManagedFields) > 0 {
		fieldsTime = one.Metadata.ManagedFields[0].Time
	}
	got, err := r.render(1, one.Metadata.UID, one.Metadata.CreationTimestamp, fieldsTime)
	if err != nil {
		return r, err
	}
	if !bytes.Equal(got, stored) {
		return r, fmt.Errorf("the bulk loader would not write what kube-apiserver stores:\nkube-apiserver: %s\nloader:         %s", stored, got)
	}
	return r, nil
}

// loadEtcd writes Links from..n-1 into etcd (see the top of this file).
func loadEtcd(ctx context.Context, etcdURL string, from, n int, lastApplied bool) error {
	kv := etcdKV{base: etcdURL, hc: &http.Client{Timeout: time.Minute}}
	r, err := newLinkRenderer(ctx, kv, lastApplied)
	if err != nil {
		return err
	}
	// Batches in flight when an earlier load was interrupted may have left
	// gaps below the count it reached: write those again (putAbsent keeps
	// what exists).
	from = max(2, from-etcdWriters*etcdBatch)
	logf("bulk load: the template renders Link 1 as kube-apiserver stored it; writing Links %d..%d into etcd", from, n-1)
	return parallel.Batches(ctx, from, n, etcdBatch, etcdWriters, func(lo, hi int) error {
		now := time.Now().UTC().Format(time.RFC3339)
		kvs := make([][2][]byte, 0, hi-lo)
		for i := lo; i < hi; i++ {
			v, err := r.render(i, string(uuid.NewUUID()), now, now)
			if err != nil {
				return err
			}
			kvs = append(kvs, [2][]byte{[]byte(linkKeyPrefix + linkName(i)), v})
		}
		if err := kv.putAbsent(ctx, kvs); err != nil {
			return fmt.Errorf("links %d..%d: %w", lo, hi-1, err)
		}
		if lo/100000 != (hi-1)/100000 {
			logf("%d Links", hi)
		}
		return nil
	})
}
