// The workshop page's script: it reads the messages embedded in #kd-msgs (or sent by a live
// server), lists them, and draws the selected one: wire diagram, field tree and hex dumps, each
// field element carrying data-offset and data-size, each byte data-offset, the selected field's
// bytes the class hl. Nothing here fetches anything unless the page was served with a live,
// upload or filter endpoint in #kd-meta.
(function () {
  'use strict';
  var FlagNullable = 1, FlagError = 2, FlagSecret = 4, FlagDecompressed = 8, FlagHeader = 16, FlagPrefixShift = 8;
  var DIAGRAM_MAX = 800, TREE_MAX = 4000, HEX_MAX = 1 << 14;

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }
  function hex4(n) { var s = n.toString(16); while (s.length < 4) s = '0' + s; return '0x' + s; }
  // plural is n and the noun, in the plural unless n is 1 (internal/plural's Count).
  function plural(n, noun) { return n + ' ' + noun + (n === 1 ? '' : 's'); }
  function readJSON(id, dflt) { var e = $(id); return e && e.textContent.trim() ? JSON.parse(e.textContent) : dflt; }

  var msgs = readJSON('kd-msgs', []);
  var meta = readJSON('kd-meta', {});
  var shown = [];      // indexes into msgs, in list order, after the filters
  var cur = -1;        // the selected message (index into msgs)
  var view = null;     // the drawn message: nodes, panes, selection
  var t0 = null;       // time of the first message, for relative times
  var paused = false, queued = [], dropped = meta.dropped || 0;
  // The display filter (-Y): the expression applied ('' none); for captures and uploads, the
  // indexes of msgs it keeps (null: every one). A live page's stream sends only what it keeps.
  var yApplied = '', yMatch = null, upFile = null, es = null;

  // Decoding a message's compact tree (see render.PageMessages).
  function decode(m) {
    var s = m.s, flat = [];
    function mk(a, parent, depth) {
      var n = { name: s[a[0]], type: s[a[1]], off: a[2], size: a[3], val: s[a[4]], flags: a[5],
        about: s[a[6]], pane: a[7], pre: a[5] >> FlagPrefixShift, parent: parent, depth: depth, kids: [], idx: flat.length, els: [] };
      flat.push(n);
      if (a.length > 8) for (var i = 0; i < a[8].length; i++) n.kids.push(mk(a[8][i], n, depth + 1));
      return n;
    }
    var top = [];
    for (var i = 0; i < m.f.length; i++) top.push(mk(m.f[i], null, 0));
    return { top: top, flat: flat };
  }
  function bytesOf(b64) {
    var bin = atob(b64), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  // The message list.
  function relTime(m) {
    if (!m.time) return '';
    var t = Date.parse(m.time) / 1000 + fraction(m.time);
    if (t0 === null) t0 = t;
    return (t - t0).toFixed(6);
  }
  // Date.parse keeps milliseconds: the microseconds come from the text.
  function fraction(s) {
    var x = /\.(\d+)Z$/.exec(s);
    if (!x) return 0;
    var d = x[1].slice(3, 9);
    return d ? parseInt(d, 10) / Math.pow(10, d.length) / 1000 : 0;
  }
  function apiText(m) {
    return (m.api_name || '') + (m.api_key >= 0 && m.api_version != null ? ' v' + m.api_version : '');
  }
  function row(i) {
    var m = msgs[i], tr = el('tr');
    tr.setAttribute('data-frame', m.frame);
    tr.setAttribute('data-i', i);
    if (m.error) tr.className = 'err';
    var lat = m.latency_us != null ? (m.latency_us / 1000).toFixed(3) : '';
    var cells = [[m.frame, 'num'], [relTime(m), 'num'], [m.kind === 'response' ? '\u2190' : '\u2192', ''],
      [apiText(m) + (m.kind === 'response' ? ' resp' : ''), 'api'], [m.correlation_id, 'num'],
      [lat, 'num'], [m.size, 'num'], [m.client_id || '', ''], [m.src + ' \u2192 ' + m.dst, '']];
    for (var c = 0; c < cells.length; c++) tr.appendChild(el('td', cells[c][1], cells[c][0]));
    tr.title = m.title;
    return tr;
  }
  function matches(m, i) {
    if (yMatch && !yMatch[i]) return false;
    var kind = $('f-kind').value, api = $('f-api').value, text = $('f-text').value.toLowerCase();
    var stream = $('f-stream').value;
    if (kind && m.kind !== kind) return false;
    if (api && m.api_name !== api) return false;
    if ($('f-errors').checked && !m.error) return false;
    if (stream !== '' && String(m.stream) !== stream) return false;
    if (text) {
      var hay = (m.title + ' ' + m.frame + ' ' + m.src + ' ' + m.dst + ' ' + (m.file || '')).toLowerCase();
      if (hay.indexOf(text) < 0) return false;
    }
    return true;
  }
  function fillAPIs() {
    var sel = $('f-api'), have = {}, names = [];
    for (var i = 0; i < sel.options.length; i++) have[sel.options[i].value] = true;
    for (var j = 0; j < msgs.length; j++) if (msgs[j].api_name && !have[msgs[j].api_name]) { have[msgs[j].api_name] = true; names.push(msgs[j].api_name); }
    names.sort();
    for (var k = 0; k < names.length; k++) sel.appendChild(el('option', '', names[k]));
  }
  function relist() {
    var body = $('rows'), frag = document.createDocumentFragment();
    body.textContent = '';
    shown = [];
    for (var i = 0; i < msgs.length; i++) {
      if (!matches(msgs[i], i)) continue;
      shown.push(i);
      frag.appendChild(row(i));
    }
    body.appendChild(frag);
    count();
    if (shown.length && shown.indexOf(cur) < 0) select(shown[0]);
    else if (!shown.length) clearDetail();
    else markRow();
  }
  function append(list) {
    var body = $('rows');
    for (var i = 0; i < list.length; i++) {
      msgs.push(list[i]);
      var k = msgs.length - 1;
      if (matches(msgs[k], k)) { shown.push(k); body.appendChild(row(k)); }
    }
    var keep = meta.keep || 0;
    if (keep > 0 && msgs.length > keep) {
      var n = msgs.length - keep;
      dropped += n;
      msgs.splice(0, n);
      if (cur >= 0) cur -= n;
      if (cur < 0) view = null;
      relist();
    }
    fillAPIs();
    count();
    if (dropped) $('bar').textContent = droppedNote();
    if (cur < 0 && shown.length) select(shown[0]);
  }
  // droppedNote is what the bar says of the messages a live page dropped (dropped of them).
  function droppedNote() { return plural(dropped, 'older message') + (dropped === 1 ? ' was' : ' were') + ' dropped: the page keeps the last ' + meta.keep + '.'; }
  function count() {
    $('count').textContent = shown.length + ' of ' + plural(msgs.length, 'message') + (meta.live && yApplied ? ' that match -Y' : '');
  }
  function markRow() {
    var rows = $('rows').querySelectorAll('tr.cur');
    for (var i = 0; i < rows.length; i++) rows[i].classList.remove('cur');
    var r = $('rows').querySelector('tr[data-i="' + cur + '"]');
    if (r) { r.classList.add('cur'); scrollInto(r); }
  }
  // Scrolling waits for the next frame, so that a burst of selections (keys held down) costs
  // one layout, not one each.
  var toScroll = [];
  function scrollInto(e) {
    if (!toScroll.length) requestAnimationFrame(function () {
      var list = toScroll;
      toScroll = [];
      for (var i = 0; i < list.length; i++) if (list[i].isConnected) list[i].scrollIntoView({ block: 'nearest' });
    });
    toScroll.push(e);
  }

  // The detail of the selected message.
  function clearDetail() {
    cur = -1; view = null;
    $('detail').textContent = '';
    $('detail').appendChild(el('div', 'empty', msgs.length ? 'No message matches the filters.' : 'No messages.'));
  }
  function select(i) {
    cur = i;
    markRow();
    draw(msgs[i]);
  }
  function draw(m) {
    var d = $('detail');
    d.textContent = '';
    var t = decode(m);
    view = { m: m, top: t.top, flat: t.flat, panes: [], pinned: null, shownSel: null, lit: null };
    d.appendChild(el('h2', '', '#' + m.frame + '  ' + m.title));
    var info = (m.time ? m.time.replace('T', ' ').replace('Z', ' UTC') + '  ' : '') + m.src + ' \u2192 ' + m.dst +
      '  stream ' + m.stream + (m.file ? '  ' + m.file : '') + (m.tls ? '  ' + m.tls : '');
    d.appendChild(el('div', 'meta', info));
    for (var w = 0; w < (m.warnings || []).length; w++) d.appendChild(el('div', 'warn', '! ' + m.warnings[w]));

    d.appendChild(el('h3', '', 'Wire diagram'));
    var diag = el('div', '');
    diag.id = 'diagram';
    var hdr = [], body = [];
    for (var k = 0; k < t.top.length; k++) (t.top[k].flags & FlagHeader ? hdr : body).push(t.top[k]);
    var dir = m.kind === 'response' ? 'Response' : 'Request';
    var budget = { left: DIAGRAM_MAX };
    diag.appendChild(block('hdr', dir + ' Header v' + m.header_version, hdr, budget));
    diag.appendChild(block('bdy', (m.api_name || '') + dir + (m.api_version != null ? ' v' + m.api_version : ''), body, budget));
    if (budget.left < 0) diag.appendChild(el('div', 'more', 'The diagram shows the first ' + DIAGRAM_MAX + ' fields; the tree below has them all.'));
    d.appendChild(diag);

    var bytesEl = el('div', '');
    bytesEl.id = 'bytes';
    bytesEl.appendChild(el('h3', '', 'Bytes'));
    var panesEl = el('div', '');
    panesEl.id = 'panes';
    view.panesEl = panesEl;
    view.panes.push(pane(0, 'frame: ' + plural(m.size, 'byte') + ', offsets from the size prefix', bytesOf(m.b)));
    for (var z = 0; z < (m.z || []).length; z++) {
      var zb = bytesOf(m.z[z].b);
      view.panes.push(pane(z + 1, 'decompressed records (' + m.z[z].codec + ', ' + plural(zb.length, 'byte') + ', from the payload at ' +
        hex4(m.z[z].at) + '): offsets from their start', zb));
    }
    for (var p = 0; p < view.panes.length; p++) panesEl.appendChild(view.panes[p].el);
    bytesEl.appendChild(panesEl);
    bytesEl.appendChild(el('div', 'help noprint', 'Point at a field to light up its bytes (a length or count before them in a deeper shade); click a byte for its field. Keys: \u2191 \u2193 messages, \u2190 \u2192 fields, Enter into a field, Esc out of it.'));
    d.appendChild(bytesEl);
    d.appendChild(el('h3', '', 'Fields'));
    d.appendChild(tree(t.flat));
  }

  function fieldAttrs(e, n) {
    e.setAttribute('data-offset', n.off);
    e.setAttribute('data-size', n.size);
    if (n.pre) e.setAttribute('data-prefix', n.pre);
    e.setAttribute('data-pane', n.pane);
    e.setAttribute('data-n', n.idx);
    n.els.push(e);
  }
  function block(cls, title, nodes, budget) {
    var b = el('div', 'block ' + cls);
    b.appendChild(el('div', 'bt', title));
    var kids = el('div', 'kids');
    for (var i = 0; i < nodes.length; i++) box(kids, nodes[i], budget);
    b.appendChild(kids);
    return b;
  }
  function box(parent, n, budget) {
    if (--budget.left < 0) return;
    var b = el('div', 'box' + (n.kids.length ? ' c' : '') + (n.flags & FlagDecompressed ? ' dec' : ''));
    fieldAttrs(b, n);
    if (!n.kids.length) b.style.flexGrow = Math.log2(n.size + 1).toFixed(2); // wider boxes for more bytes
    var l = el('div', 'l');
    l.appendChild(el('span', 'n', n.name + (n.flags & FlagNullable ? '?' : '')));
    l.appendChild(document.createTextNode(' '));
    l.appendChild(el('span', 't', n.type));
    l.appendChild(el('span', 'z', ' \u00b7 ' + n.size + 'B'));
    b.appendChild(l);
    b.title = n.name + ' ' + n.type + ', ' + plural(n.size, 'byte') + ' at ' + hex4(n.off) + (n.pre ? ' (' + n.pre + ' of them its length or count)' : '') +
      (n.val ? ': ' + n.val : '') + (n.about ? '\n' + n.about : '');
    if (n.kids.length) {
      var k = el('div', 'kids');
      for (var i = 0; i < n.kids.length; i++) box(k, n.kids[i], budget);
      b.appendChild(k);
    }
    parent.appendChild(b);
  }
  function tree(flat) {
    var t = el('table', 'tree');
    t.id = 'tree';
    var h = el('tr');
    var heads = ['offset', 'size', 'type', 'field', 'value', 'about'];
    for (var i = 0; i < heads.length; i++) h.appendChild(el('th', '', heads[i]));
    t.appendChild(h);
    var n = Math.min(flat.length, TREE_MAX);
    for (var j = 0; j < n; j++) t.appendChild(treeRow(flat[j]));
    if (flat.length > n) {
      var more = el('button', 'noprint', 'show all ' + flat.length + ' fields');
      more.onclick = function () {
        for (var j = n; j < flat.length; j++) t.appendChild(treeRow(flat[j]));
        more.remove();
      };
      var tr = el('tr'), td = el('td');
      td.colSpan = 6;
      td.appendChild(more);
      tr.appendChild(td);
      t.appendChild(tr);
    }
    return t;
  }
  function treeRow(n) {
    var tr = el('tr', (n.flags & FlagHeader || headerChild(n) ? 'hdr' : '') + (n.flags & FlagDecompressed ? ' dec' : ''));
    fieldAttrs(tr, n);
    tr.appendChild(el('td', 'o', (n.flags & FlagDecompressed ? 'd' : '') + hex4(n.off)));
    tr.appendChild(el('td', 'num', n.size));
    tr.appendChild(el('td', '', n.type));
    var name = n.name;
    if (n.parent && name.charAt(0) === '[') name = n.parent.name + name;
    tr.appendChild(el('td', 'f', new Array(n.depth + 1).join('  ') + name + (n.flags & FlagNullable ? '?' : '')));
    var v = el('td', 'v' + (n.flags & FlagError ? ' e' : '') + (n.val.charAt(0) === '"' ? ' s' : ''), n.val);
    tr.appendChild(v);
    tr.appendChild(el('td', 'a', n.about));
    return tr;
  }
  function headerChild(n) {
    while (n.parent) n = n.parent;
    return !!(n.flags & FlagHeader);
  }

  // A hex dump: rows of 16 bytes, each byte a span with data-offset, drawn up to HEX_MAX bytes
  // and further when a field beyond is selected.
  function pane(k, title, bytes) {
    var p = { k: k, bytes: bytes, spans: [], ascii: [], drawn: 0, el: el('div', 'pane') };
    p.el.setAttribute('data-pane', k);
    p.el.appendChild(el('div', 'pt', title));
    p.hex = el('div', 'hex');
    p.el.appendChild(p.hex);
    p.more = el('button', 'noprint', '');
    p.more.onclick = function () { drawTo(p, p.bytes.length); };
    p.el.appendChild(p.more);
    drawTo(p, Math.min(bytes.length, HEX_MAX));
    return p;
  }
  function drawTo(p, end) {
    end = Math.min(p.bytes.length, Math.ceil(end / 16) * 16);
    var frag = document.createDocumentFragment();
    for (var off = p.drawn; off < end; off += 16) {
      var r = el('span', 'r');
      r.appendChild(el('span', 'ro', off.toString(16).padStart(4, '0')));
      var as = el('span', 'as');
      for (var i = off; i < Math.min(off + 16, p.bytes.length); i++) {
        var c = p.bytes[i];
        var s = el('span', 'b', (c < 16 ? '0' : '') + c.toString(16));
        s.setAttribute('data-offset', i);
        p.spans.push(s);
        var a = el('span', 'a', c >= 0x20 && c <= 0x7e ? String.fromCharCode(c) : '.');
        p.ascii.push(a);
        as.appendChild(a);
        r.appendChild(s);
      }
      r.appendChild(as);
      frag.appendChild(r);
    }
    p.hex.appendChild(frag);
    p.drawn = Math.max(p.drawn, end);
    var left = p.bytes.length - p.drawn;
    p.more.textContent = left > 0 ? 'show the other ' + plural(left, 'byte') : '';
    p.more.style.display = left > 0 ? '' : 'none';
  }

  // Selection: a field lights up its bytes (class hl), a byte selects the innermost field.
  function show(n) {
    if (!view) return;
    var i;
    if (view.shownSel) for (i = 0; i < view.shownSel.els.length; i++) view.shownSel.els[i].classList.remove('sel');
    view.shownSel = n;
    var want = null;
    if (n) {
      for (i = 0; i < n.els.length; i++) n.els[i].classList.add('sel');
      var p = view.panes[n.pane];
      if (p) {
        if (n.off + n.size > p.drawn) drawTo(p, n.off + n.size);
        want = { p: p, a: Math.max(0, n.off), b: Math.min(n.off + n.size, p.spans.length) };
        want.c = Math.min(want.a + n.pre, want.b); // the length or count prefix ends here
      }
    }
    light(view.lit, want);
    view.lit = want;
    if (want && want.b > want.a) reveal(want.p.spans[want.a]);
  }
  // reveal scrolls the box of hex dumps, and only it, to show byte span s.
  // It waits for the next frame, as scrolling does.
  var toReveal = null;
  function reveal(s) {
    if (!toReveal) requestAnimationFrame(function () {
      var s = toReveal, box = view && view.panesEl;
      toReveal = null;
      if (!box || !s.isConnected) return;
      var top = s.offsetTop - box.offsetTop;
      if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - 20) box.scrollTop = Math.max(0, top - 30);
    });
    toReveal = s;
  }
  // light moves the class hl from the bytes of range was to those of range now, touching only
  // the bytes that change (a byte clicked inside a big payload lights nothing new); the bytes
  // of a length or count prefix get the class hlp too, a shade of their own.
  function light(was, now) {
    var i;
    if (was) for (i = was.a; i < was.c; i++) {
      was.p.spans[i].classList.remove('hlp');
      was.p.ascii[i].classList.remove('hlpa');
    }
    if (was) for (i = was.a; i < was.b; i++) {
      if (now && now.p === was.p && i >= now.a && i < now.b) continue;
      was.p.spans[i].classList.remove('hl');
      was.p.ascii[i].classList.remove('hla');
    }
    if (now) for (i = now.a; i < now.b; i++) {
      if (was && now.p === was.p && i >= was.a && i < was.b) continue;
      now.p.spans[i].classList.add('hl');
      now.p.ascii[i].classList.add('hla');
    }
    if (now) for (i = now.a; i < now.c; i++) {
      now.p.spans[i].classList.add('hlp');
      now.p.ascii[i].classList.add('hlpa');
    }
  }
  function pin(n, scroll) {
    if (!view) return;
    view.pinned = n;
    show(n);
    if (scroll && n) {
      for (var i = 0; i < n.els.length; i++) if (n.els[i].tagName === 'TR') scrollInto(n.els[i]);
    }
  }
  function nodeOf(e) {
    while (e && e.getAttribute) {
      if (e.hasAttribute('data-n')) return view && view.flat[+e.getAttribute('data-n')];
      e = e.parentNode;
    }
    return null;
  }
  function innermost(k, off) {
    var best = null;
    for (var i = 0; i < view.flat.length; i++) {
      var n = view.flat[i];
      if (n.pane === k && n.size > 0 && off >= n.off && off < n.off + n.size && (!best || n.depth >= best.depth)) best = n;
    }
    return best;
  }

  document.addEventListener('click', function (ev) {
    var t = ev.target;
    if (!view || !t.closest) return;
    if (t.classList.contains('b') && t.hasAttribute('data-offset')) {
      var pe = t.closest('.pane');
      var n = innermost(+pe.getAttribute('data-pane'), +t.getAttribute('data-offset'));
      if (n) pin(n, true);
      return;
    }
    var f = nodeOf(t);
    if (f) { ev.stopPropagation(); pin(f, false); return; }
    var r = t.closest('tr[data-i]');
    if (r) select(+r.getAttribute('data-i'));
  });
  document.addEventListener('mouseover', function (ev) {
    if (!view) return;
    var f = nodeOf(ev.target);
    if (f) show(f);
    else if (view.shownSel !== view.pinned) show(view.pinned);
  });
  document.addEventListener('keydown', function (ev) {
    var tag = (ev.target.tagName || '').toLowerCase();
    if (tag === 'input' || tag === 'select' || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    var pos = shown.indexOf(cur), n = view && view.pinned;
    switch (ev.key) {
      case 'ArrowDown': if (pos + 1 < shown.length) select(shown[pos + 1]); break;
      case 'ArrowUp': if (pos > 0) select(shown[pos - 1]); break;
      case 'ArrowRight': if (view) pin(view.flat[n ? Math.min(n.idx + 1, view.flat.length - 1) : 0], true); break;
      case 'ArrowLeft': if (view) pin(view.flat[n ? Math.max(n.idx - 1, 0) : 0], true); break;
      case 'Enter': if (n && n.kids.length) pin(n.kids[0], true); else if (view && !n) pin(view.flat[0], true); break;
      case 'Escape': if (n && n.parent) pin(n.parent, true); break;
      default: return;
    }
    ev.preventDefault();
  });

  // Controls.
  function theme() {
    var root = document.documentElement;
    var dark = root.getAttribute('data-theme') ? root.getAttribute('data-theme') === 'dark' : window.matchMedia('(prefers-color-scheme: dark)').matches;
    root.setAttribute('data-theme', dark ? 'light' : 'dark');
  }
  $('theme').onclick = theme;
  // The list's filters, and on a served page the -Y expression, are in the URL's query (text,
  // kind, api, stream, errors, y) so that a link opens the list as it was.
  var listParams = { text: 'f-text', kind: 'f-kind', api: 'f-api', stream: 'f-stream', errors: 'f-errors' };
  function setURL(name, value) {
    if (!history.replaceState || location.protocol === 'file:') return;
    var p = new URLSearchParams(location.search);
    if (value) p.set(name, value); else p.delete(name);
    var q = p.toString();
    history.replaceState(null, '', location.pathname + (q ? '?' + q : '') + location.hash);
  }
  function listChanged() {
    for (var k in listParams) {
      var e = $(listParams[k]);
      setURL(k, e.type === 'checkbox' ? (e.checked ? '1' : '') : e.value);
    }
    relist();
  }
  ['f-kind', 'f-api', 'f-errors'].forEach(function (id) { $(id).onchange = listChanged; });
  ['f-text', 'f-stream'].forEach(function (id) { $(id).oninput = listChanged; });

  if (meta.left_out > 0) {
    $('bar').textContent = 'This page holds the first ' + plural(meta.limit, 'message') + '; ' + meta.left_out +
      (meta.left_out === 1 ? ' more was' : ' more were') + ' left out. Narrow the capture with filters (--api, --stream, --topic, --client-id, --errors, ...) or raise --max-messages.';
  }
  if (meta.notices && meta.notices.length) {
    var nd = $('notices');
    nd.appendChild(el('summary', '', meta.notices.length + (meta.notices.length === 1 ? ' notice' : ' notices') + ' (lost bytes, resynchronisation, TLS, ...)'));
    for (var i = 0; i < meta.notices.length; i++) {
      var no = meta.notices[i];
      nd.appendChild(el('div', '', '#' + no.frame + '  ' + no.src + ' \u2192 ' + no.dst + '  stream ' + no.stream + '  ! ' + no.text));
    }
    nd.hidden = false;
  }

  // A served page: messages pushed as they complete, pause and resume, uploads.
  function withParams(u, params) {
    var q = [];
    for (var k in params) q.push(k + '=' + encodeURIComponent(params[k]));
    return q.length ? u + (u.indexOf('?') < 0 ? '?' : '&') + q.join('&') : u;
  }
  // listen opens the event stream: from the end of the page's snapshot, or, for a display
  // filter (or none after one), from the first message the server holds, the list emptied.
  function listen(params, fresh) {
    if (es) es.close();
    if (fresh) {
      msgs = []; queued = []; cur = -1; view = null; t0 = null;
      relist();
    }
    es = new EventSource(withParams(meta.live, params));
    var pb = $('pause'), held = true; // held: what the server held when the stream opened
    es.addEventListener('held', function () { held = false; });
    es.onmessage = function (ev) {
      var m = JSON.parse(ev.data);
      if (paused && !held) {
        queued.push(m);
        if (meta.keep && queued.length > meta.keep) { dropped += queued.length - meta.keep; queued.splice(0, queued.length - meta.keep); }
        pb.textContent = 'resume (' + queued.length + ' waiting)';
      } else append([m]);
    };
    es.addEventListener('start', function (ev) {
      if (!fresh) return;
      fresh = false;
      dropped = JSON.parse(ev.data).dropped;
      $('bar').textContent = dropped ? droppedNote() : '';
    });
    es.addEventListener('warning', function (ev) { yWarn(JSON.parse(ev.data).text); });
    es.addEventListener('end', function () {
      es.close();
      pb.hidden = true;
      $('bar').textContent = 'The capture has ended: ' + plural(msgs.length, 'message') + '.';
    });
    es.addEventListener('lost', function () {
      es.close();
      $('bar').textContent = 'kdissect let this page go: it did not keep up with the messages. Reload it to go on.';
    });
    es.onerror = function () {
      if (es.readyState === EventSource.CLOSED) $('bar').textContent = 'The connection to kdissect was lost: reload the page.';
    };
    es.addEventListener('notice', function (ev) {
      var no = JSON.parse(ev.data);
      var nd = $('notices');
      if (nd.hidden) { nd.appendChild(el('summary', '', 'notices')); nd.hidden = false; }
      nd.appendChild(el('div', '', '#' + no.frame + '  ' + no.src + ' \u2192 ' + no.dst + '  ! ' + no.text));
    });
  }
  if (meta.live) {
    var pb = $('pause');
    pb.hidden = false;
    pb.onclick = function () {
      paused = !paused;
      pb.textContent = paused ? 'resume' : 'pause';
      if (!paused) { append(queued); queued = []; }
    };
  }

  // The display filter: the page sends the expression to the server, which compiles it as -Y
  // does and answers which messages it keeps (or, live, streams only those). An expression that
  // does not compile is shown red with the server's message, and the list keeps the last
  // filter that did: a typo must not blank a projected screen.
  // yNote: the warning of the filter applied (it failed on some pairs), shown again by Esc.
  var ybox = $('f-y'), ymsg = $('y-msg'), yAsked = 0, yTimer = null, yNote = '';
  function yState(cls, text, msgCls) {
    ybox.className = cls;
    ymsg.className = msgCls || '';
    ymsg.textContent = text || '';
  }
  function yWarn(text) { yNote = text; yState('warn', '! ' + text, 'note'); }
  function yAsk(params, body) {
    var opt = { method: body ? 'POST' : 'GET' };
    if (body) opt.body = body;
    if (meta.token) opt.headers = { 'X-Kdissect-Token': meta.token };
    return fetch(withParams(meta.filter, params), opt).then(function (r) {
      return r.text().then(function (t) {
        var res;
        try { res = JSON.parse(t); } catch (e) { res = { error: t.trim() || r.statusText }; }
        if (!r.ok) { var err = new Error(res.error || r.statusText); err.res = res; err.status = r.status; throw err; }
        return res;
      });
    });
  }
  // yRefused says why an expression was not applied: red when it is wrong; yellow when the
  // server could not finish it (503: past the time bound, or busy), which is no fault of it.
  function yRefused(e, expr, caret) {
    var res = e.res || { error: e.message, offset: -1 };
    var still = yApplied ? 'The list still shows -Y ' + yApplied + '.' : 'The list shows every message.';
    if (e.status === 503) { yState('warn', '! ' + res.error + '\n' + still, 'note'); return; }
    yState('bad', res.error + '\n' + still, 'bad');
    if (caret && res.offset >= 0 && document.activeElement === ybox) ybox.setSelectionRange(units(expr, res.offset), units(expr, res.offset + 1));
  }
  // units is where the character chars of s (the server counts characters, as -Y does) is in
  // the box, which counts UTF-16 units: an emoji is two.
  function units(s, chars) { return Array.from(s).slice(0, chars).join('').length; }
  function yDone(expr, res) {
    yApplied = expr;
    yNote = '';
    ybox.setAttribute('data-applied', expr);
    if (res && res.warning) yWarn(res.warning);
    else yState(expr ? 'ok' : '', '');
    setURL('y', expr);
  }
  function applyY(expr) {
    var asked = ++yAsked;
    clearTimeout(yTimer);
    expr = expr.trim() ? expr : '';
    if (!expr && !yApplied) { yDone('', null); return; }
    if (meta.live) {
      var go = function () {
        if (asked !== yAsked) return;
        listen(expr ? { y: expr } : {}, true);
        yDone(expr, null);
      };
      if (!expr) { go(); return; }
      yState('', 'applying\u2026', 'note');
      yAsk({ check: 1, y: expr }).then(go, function (e) {
        if (asked !== yAsked) return;
        yRefused(e, expr, true);
        if (!es) listen({ after: meta.after || 0 }, false);
      });
      return;
    }
    if (!expr) { yMatch = null; yDone('', null); relist(); return; }
    // The expression the list shows, over the same messages: its answer is known (an uploaded
    // capture is not sent and dissected again for it).
    if (expr === yApplied && yMatch) { yDone(expr, yNote ? { warning: yNote } : null); return; }
    yState('', 'applying\u2026', 'note');
    var ask = upFile ? yAsk({ y: expr, name: upFile.name }, upFile) : yAsk({ y: expr });
    ask.then(function (res) {
      if (asked !== yAsked) return;
      if (res.messages !== msgs.length) throw new Error('the server holds ' + plural(res.messages, 'message') + ', the page ' + msgs.length + ': reload the page');
      yMatch = {};
      for (var i = 0; i < res.match.length; i++) yMatch[res.match[i]] = true;
      yDone(expr, res);
      relist();
    }).catch(function (e) {
      if (asked === yAsked) yRefused(e, expr, true);
    });
  }
  if (meta.filter) {
    $('y-apply').hidden = false;
    $('y-apply').onclick = function () { applyY(ybox.value); };
    ybox.addEventListener('keydown', function (ev) {
      if (ev.key === 'Enter') { ev.preventDefault(); applyY(ybox.value); }
      if (ev.key === 'Escape') {
        // Not the search box's own Escape, which empties it (and so would show everything).
        ev.preventDefault();
        clearTimeout(yTimer);
        yAsked++;
        ybox.value = yApplied;
        if (yNote) yWarn(yNote);
        else yState(yApplied ? 'ok' : '', '');
      }
    });
    // As it is typed, the expression is compiled (not applied) and the box coloured; emptied,
    // it is applied at once: every message again.
    ybox.addEventListener('input', function () {
      clearTimeout(yTimer);
      var expr = ybox.value, asked = yAsked;
      if (!expr.trim()) { if (yApplied) applyY(''); else yState('', ''); return; }
      yTimer = setTimeout(function () {
        yAsk({ check: 1, y: expr }).then(function () {
          if (asked === yAsked && ybox.value === expr) yState('ok', expr === yApplied ? '' : 'Enter applies it.', 'note');
        }, function (e) {
          if (asked === yAsked && ybox.value === expr) yRefused(e, expr, false);
        });
      }, 250);
    });
  } else {
    // The file page has no server to ask: expressions are for kdissect serve, or -Y.
    ybox.disabled = true;
    ybox.placeholder = 'display filter: needs kdissect serve (or -Y on the command line, which chose what this page holds)';
    // A link to this page with a filter (?y=, as a served page's link has): say why it is not
    // applied, rather than look unfiltered with no word.
    var yLinked = new URLSearchParams(location.search).get('y');
    if (yLinked) yState('', 'This page is a file, with no kdissect serve to evaluate -Y ' + yLinked + ': it shows every message it holds. ' +
      'Serve it (kdissect serve CAPTURE) or write the page with -Y on the command line.', 'note');
  }

  if (meta.upload) {
    var drop = $('drop'), up = $('upload');
    up.hidden = false;
    function send(file) {
      if (meta.max_upload && file.size > meta.max_upload) { $('bar').textContent = file.name + ': ' + plural(file.size, 'byte') + ' is over the limit of ' + plural(meta.max_upload, 'byte') + '.'; return; }
      $('bar').textContent = 'dissecting ' + file.name + '…';
      fetch(withParams(meta.upload, { name: file.name }), { method: 'POST', body: file, headers: meta.token ? { 'X-Kdissect-Token': meta.token } : {} })
        .then(function (r) { return r.ok ? r.json() : r.text().then(function (t) { throw new Error(t); }); })
        .then(function (res) {
          msgs = res.messages; cur = -1; t0 = null; yMatch = null; upFile = file;
          $('bar').textContent = file.name + ': ' + plural(msgs.length, 'message') + (res.left_out ? ', ' + res.left_out + ' more left out' : '') + (res.error ? '; ' + res.error : '');
          $('f-api').length = 1;
          fillAPIs();
          relist();
          if (yApplied) applyY(yApplied);
        })
        .catch(function (e) { $('bar').textContent = file.name + ': ' + e.message; });
    }
    document.addEventListener('dragover', function (ev) { ev.preventDefault(); drop.classList.add('on'); });
    document.addEventListener('dragleave', function (ev) { if (ev.target === drop) drop.classList.remove('on'); });
    document.addEventListener('drop', function (ev) {
      ev.preventDefault();
      drop.classList.remove('on');
      if (ev.dataTransfer.files.length) send(ev.dataTransfer.files[0]);
    });
    $('upload-file').onchange = function () { if (this.files.length) send(this.files[0]); };
  }

  fillAPIs();
  if (location.protocol !== 'file:') {
    var lq = new URLSearchParams(location.search);
    for (var lk in listParams) {
      var le = $(listParams[lk]), lv = lq.get(lk);
      if (lv === null) continue;
      if (le.type === 'checkbox') le.checked = lv === '1';
      else if (le.tagName === 'SELECT' && !Array.prototype.some.call(le.options, function (o) { return o.value === lv; })) le.appendChild(el('option', '', lv)).selected = true;
      else le.value = lv;
    }
  }
  relist();
  if (!msgs.length) clearDetail();
  // A link may carry a filter (?y=EXPR): a teacher shares what the room should look at.
  var y0 = meta.filter ? new URLSearchParams(location.search).get('y') : null;
  if (y0) { ybox.value = y0; applyY(y0); }
  else if (meta.live) listen({ after: meta.after || 0 }, false);
  if (dropped) $('bar').textContent = droppedNote();
  window.kdissect = { select: select, messages: function () { return msgs; }, view: function () { return view; } };
})();
