// qr.js: a link's QR code from the API (PUT /links/{id}/qr-code), with
// colour, size and download. The API renders it on a PUT (the options are
// its body's and query's), which an <img src> cannot send: the image is
// fetched (the session cookie and CSRF header authenticate it) and shown
// from a blob: URL.

import { call, query } from './api.js';
import { h, showModal } from './dom.js';

export function qrDialog(link) {
  const color = h('input', { id: 'qr-color', type: 'color', value: '#000000' });
  const background = h('input', { id: 'qr-bg', type: 'color', value: '#ffffff' });
  const size = h('input', { id: 'qr-size', type: 'number', min: '64', max: '2048', step: '8', value: '256' });
  const format = h('select', { id: 'qr-format' }, h('option', { value: 'png' }, 'PNG'), h('option', { value: 'svg' }, 'SVG'));
  const img = h('img', { alt: `QR code for ${link.link}`, 'data-test': 'qr-image' });
  const err = h('p', { class: 'field-error', role: 'alert' });
  const download = h('a', { class: 'button', 'data-test': 'qr-download' }, 'Download');
  let url = null;
  const render = async () => {
    err.textContent = '';
    try {
      const params = { color: color.value, background: background.value, size: size.value };
      if (format.value === 'svg') params.format = 'svg';
      const { blob } = await call('PUT', `/links/${link.id}/qr-code${query(params)}`, undefined, { blob: true });
      if (url) URL.revokeObjectURL(url);
      url = URL.createObjectURL(blob);
      img.src = url;
      download.href = url;
      download.setAttribute('download', `${link.key}.${format.value}`);
    } catch (e) {
      err.textContent = e.message;
    }
  };
  const dlg = h('dialog', { class: 'qr', 'aria-labelledby': 'qr-title' },
    h('h2', { id: 'qr-title' }, `QR code for ${link.link}`),
    h('form', { class: 'inline', onsubmit: (e) => { e.preventDefault(); render(); } },
      h('div', { class: 'field' }, h('label', { for: 'qr-color' }, 'Colour'), color),
      h('div', { class: 'field' }, h('label', { for: 'qr-bg' }, 'Background'), background),
      h('div', { class: 'field' }, h('label', { for: 'qr-size' }, 'Size (px)'), size),
      h('div', { class: 'field' }, h('label', { for: 'qr-format' }, 'Format'), format),
      h('button', { type: 'submit' }, 'Update')),
    err,
    h('div', { class: 'qr-image' }, img),
    h('div', { class: 'actions' }, download,
      h('button', { type: 'button', onclick: () => dlg.close() }, 'Close')));
  dlg.addEventListener('close', () => { if (url) URL.revokeObjectURL(url); dlg.remove(); });
  document.body.append(dlg);
  showModal(dlg);
  render();
}
