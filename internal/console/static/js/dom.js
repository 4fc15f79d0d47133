// dom.js builds elements. Text always goes in as text nodes (never parsed
// as HTML), so a link URL or tag holding markup shows as text: with the
// Content-Security-Policy that forbids inline script, this is the console's
// defence against script injection.

// h(tag, attrs, ...children): attrs are attributes, except on* keys, which
// are event listeners (functions, so nothing is parsed as code).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2), v);
    } else if (k === 'value') {
      el.value = v;
    } else if (k === 'checked') {
      el.checked = !!v;
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// replace empties el and fills it with children.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

// announce says msg to screen readers (and shows it) in the status region.
export function announce(msg, kind) {
  const st = document.getElementById('status');
  st.className = kind === 'error' ? 'status error' : 'status';
  st.textContent = msg;
}

// copyText copies s to the clipboard and says so.
export async function copyText(s, what) {
  try {
    await navigator.clipboard.writeText(s);
    announce(`Copied ${what}: ${s}`);
  } catch {
    announce(`Could not copy; select it and copy: ${s}`, 'error');
  }
}

// showModal opens dlg as a modal dialog whose Tab and Shift+Tab go round
// its own controls. The page behind is inert either way, but without this
// Tab on the last control leaves the document (for the browser's own UI)
// instead of coming back to the first.
export function showModal(dlg) {
  dlg.addEventListener('keydown', (e) => {
    if (e.key !== 'Tab') return;
    const stops = [...dlg.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])')]
      .filter((el) => !el.disabled && el.getClientRects().length > 0);
    if (stops.length === 0) return;
    const first = stops[0];
    const last = stops[stops.length - 1];
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  });
  dlg.showModal();
}

// confirmDialog asks question in a modal dialog; resolves true on confirm.
export function confirmDialog(question, confirmLabel) {
  return new Promise((resolve) => {
    const dlg = h('dialog', { class: 'confirm', 'aria-labelledby': 'confirm-q' },
      h('p', { id: 'confirm-q' }, question));
    const done = (ok) => { dlg.close(); dlg.remove(); resolve(ok); };
    dlg.append(h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'danger', 'data-test': 'confirm-yes', onclick: () => done(true) }, confirmLabel),
      h('button', { type: 'button', 'data-test': 'confirm-no', onclick: () => done(false) }, 'Cancel')));
    dlg.addEventListener('cancel', (e) => { e.preventDefault(); done(false); });
    document.body.append(dlg);
    showModal(dlg);
    dlg.querySelector('[data-test=confirm-no]').focus();
  });
}

// formatTime shows an API timestamp in the viewer's time zone.
export function formatTime(s) {
  if (!s) return '';
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? s : d.toLocaleString();
}
