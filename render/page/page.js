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
  // offText is where field n starts, in its hex dump: a d before the offset of a field of a
  // decompressed payload, whose offsets count from the payload's start, not the frame's.
  function offText(n) { return (n.flags & FlagDecompressed ? 'd' : '') + hex4(n.off); }
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
  // The doctor's findings (#kd-findings, null: the page has none) and the frames of the one
  // whose evidence narrows the list (null: none does).
  var findings = readJSON('kd-findings', null), evFrames = null;

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
    // The steps of each field's encoding, as --explain gives them (render.PageMessages).
    for (var k = 0; k < (m.x || []).length; k++) {
      var x = m.x[k], n = flat[x[0]];
      if (n) (n.steps = n.steps || []).push({ off: x[1], size: x[2], label: s[x[3]], meaning: s[x[4]], rule: s[x[5]] });
    }
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
      [apiText(m) + (m.kind === 'response' ? ' resp' : ''), 'cut api'], [m.correlation_id, 'num'],
      [lat, 'num'], [m.size, 'num'], [m.client_id || '', 'cut cid'], ['\u200e' + m.src + ' \u2192 ' + m.dst + '\u200e', 'cut addr']];
    for (var c = 0; c < cells.length; c++) {
      var td = tr.appendChild(el('td', cells[c][1], cells[c][0]));
      if (/^cut/.test(cells[c][1])) td.title = cells[c][0]; // the whole text of a cut cell
    }
    tr.title = m.title;
    return tr;
  }
  function matches(m, i) {
    if (yMatch && !yMatch[i]) return false;
    if (evFrames && !evFrames[m.frame]) return false;
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
    if ($('tail').checked) follow();
    ladderSoon();
  }
  // follow selects the newest message listed, once a frame however many came (tail).
  var following = false;
  function follow() {
    if (following) return;
    following = true;
    requestAnimationFrame(function () {
      following = false;
      if ($('tail').checked && shown.length && cur !== shown[shown.length - 1]) select(shown[shown.length - 1]);
    });
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
    if (r) { r.classList.add('cur'); scrollInto($('list'), r); }
  }
  // Scrolling waits for the next frame, so that a burst of selections (keys held down) costs
  // one layout, not one each. Each pane scrolls on its own (never the page): what is to be seen
  // is a pane and the elements to bring into it (their union, or its start when bigger).
  var toScroll = [];
  function scrollInto(box, first, last) {
    if (!toScroll.length) requestAnimationFrame(function () {
      var list = toScroll;
      toScroll = [];
      for (var i = 0; i < list.length; i++) if (list[i][1].isConnected) bring(list[i][0], list[i][1], list[i][2] || list[i][1]);
    });
    toScroll.push([box, first, last]);
  }
  function bring(box, first, last) {
    var a = first.getBoundingClientRect(), z = last.getBoundingClientRect(), b = box.getBoundingClientRect();
    var r = { top: Math.min(a.top, z.top), bottom: Math.max(a.bottom, z.bottom), left: Math.min(a.left, z.left), right: Math.max(a.right, z.right) };
    var head = box.querySelector('th'); // a sticky heading covers the top of the pane
    var top = b.top + box.clientTop + (head && box.contains(first) && first.tagName === 'TR' ? head.offsetHeight : 0);
    var bottom = b.top + box.clientTop + box.clientHeight, left = b.left + box.clientLeft, right = left + box.clientWidth;
    if (r.top < top || r.bottom - r.top > bottom - top) box.scrollTop += r.top - top - 2;
    else if (r.bottom > bottom) box.scrollTop += r.bottom - bottom + 2;
    if (r.left < left || r.right - r.left > right - left) box.scrollLeft += r.left - left - 2;
    else if (r.right > right) box.scrollLeft += r.right - right + 2;
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
    ladderSoon();
  }
  // ladderSoon redraws the conversation at the next frame, once however many messages came.
  var ladderDue = false;
  function ladderSoon() {
    if (ladderDue || $('ladder').hidden) return;
    ladderDue = true;
    requestAnimationFrame(function () { ladderDue = false; ladder(); });
  }
  // draw fills the three panes of the detail: the diagram (with the message's heading), the
  // bytes with the working of the selected field under them, and the field tree.
  function draw(m) {
    var d = $('detail');
    d.textContent = '';
    var t = decode(m);
    view = { m: m, top: t.top, flat: t.flat, panes: [], pinned: null, hover: null, lit: null, pv: null };
    var dg = el('section', 'pn');
    dg.id = 'dg';
    dg.appendChild(el('h2', '', '#' + m.frame + '  ' + m.title));
    var info = (m.time ? m.time.replace('T', ' ').replace('Z', ' UTC') + '  ' : '') + m.src + ' \u2192 ' + m.dst +
      '  stream ' + m.stream + (m.file ? '  ' + m.file : '') + (m.tls ? '  ' + m.tls : '');
    dg.appendChild(el('div', 'meta', info));
    dg.appendChild(pairLink(m));
    for (var w = 0; w < (m.warnings || []).length; w++) dg.appendChild(el('div', 'warn', '! ' + m.warnings[w]));
    dg.appendChild(diagram(m, t.top));
    view.dg = dg;
    d.appendChild(dg);
    d.appendChild(bytesPane(m));
    var fields = el('section', 'pn');
    fields.id = 'fields';
    fields.appendChild(tree(t.flat));
    view.fields = fields;
    d.appendChild(fields);
  }
  // pairLink links a response to its request ("answers #37") and a request to its response,
  // found by the response's request_frame on the same stream.
  function pairLink(m) {
    var d = el('div', 'pair noprint'), other = -1, i;
    for (i = 0; i < msgs.length && other < 0; i++) {
      var o = msgs[i];
      if (o.stream !== m.stream || o.file !== m.file) continue;
      if (m.kind === 'response' ? o.kind === 'request' && o.frame === m.request_frame : o.kind === 'response' && o.request_frame === m.frame) other = i;
    }
    var text = m.kind === 'response' ? (m.request_frame ? 'answers #' + m.request_frame : 'its request was not captured') :
      (other >= 0 ? 'answered by #' + msgs[other].frame : 'no response on this page');
    if (other < 0) { d.appendChild(el('span', 'meta', text)); return d; }
    // A link, not a button: the page's buttons in the detail are those that draw more of it.
    var a = el('a', 'link', text + (m.kind === 'response' && m.latency_us != null ? ' after ' + (m.latency_us / 1000).toFixed(3) + ' ms' : ''));
    a.tabIndex = 0;
    a.setAttribute('role', 'link');
    a.onkeydown = function (ev) { if (ev.key === 'Enter') { ev.stopPropagation(); a.onclick(); } };
    var target = msgs[other];
    a.setAttribute('data-frame', target.frame);
    a.onclick = function () { var k = msgs.indexOf(target); if (k >= 0) select(k); };
    d.appendChild(a);
    return d;
  }
  function diagram(m, top) {
    var diag = el('div', '');
    diag.id = 'diagram';
    var hdr = [], body = [];
    for (var k = 0; k < top.length; k++) (top[k].flags & FlagHeader ? hdr : body).push(top[k]);
    var dir = m.kind === 'response' ? 'Response' : 'Request';
    var budget = { left: DIAGRAM_MAX };
    diag.appendChild(block('hdr', dir + ' Header v' + m.header_version, hdr, budget));
    diag.appendChild(block('bdy', (m.api_name || '') + dir + (m.api_version != null ? ' v' + m.api_version : ''), body, budget));
    if (budget.left < 0) diag.appendChild(el('div', 'more', 'The diagram shows the first ' + DIAGRAM_MAX + ' fields; the tree has them all.'));
    return diag;
  }
  function bytesPane(m) {
    var bytesEl = el('section', '');
    bytesEl.id = 'bytes';
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
    var ex = el('div', '');
    ex.id = 'explain';
    ex.setAttribute('data-role', 'explain');
    ex.setAttribute('aria-live', 'polite');
    view.explain = ex;
    bytesEl.appendChild(ex);
    bytesEl.appendChild(el('div', 'help noprint', 'Click a field to light up its bytes (a length or count before them in a hue of its own); point at one to preview it; click a byte for its field. Keys: \u2191 \u2193 messages, \u2190 \u2192 fields, Enter into a field, Esc out of it, [ ] the steps of its encoding.'));
    return bytesEl;
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
    b.appendChild(el('span', 'v' + (n.flags & FlagError ? ' e' : ''), n.val)); // shown, not only a tooltip: tooltips do not project
    b.title = n.name + ' ' + n.type + ', ' + plural(n.size, 'byte') + ' at ' + offText(n) + (n.pre ? ' (' + n.pre + ' of them its length or count)' : '') +
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
    var heads = ['offset', 'size', 'type', 'field', 'value'];
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
      td.colSpan = 5;
      td.appendChild(more);
      tr.appendChild(td);
      t.appendChild(tr);
    }
    return t;
  }
  function treeRow(n) {
    var tr = el('tr', (n.flags & FlagHeader || headerChild(n) ? 'hdr' : '') + (n.flags & FlagDecompressed ? ' dec' : ''));
    tr.setAttribute('data-depth', n.depth); // the indentation stops at TREE_INDENT; the depth does not
    fieldAttrs(tr, n);
    tr.appendChild(el('td', 'o', offText(n)));
    tr.appendChild(el('td', 'num', n.size));
    tr.appendChild(el('td', '', n.type));
    var name = n.name;
    if (n.parent && name.charAt(0) === '[') name = n.parent.name + name;
    tr.appendChild(el('td', 'f', indent(n.depth) + name + (n.flags & FlagNullable ? '?' : '')));
    var v = el('td', 'v' + (n.flags & FlagError ? ' e' : '') + (n.val.charAt(0) === '"' ? ' s' : ''), n.val);
    tr.appendChild(v);
    if (n.about) tr.title = n.about;
    return tr;
  }
  // indent is the room before a name in the tree: a character a level, up to TREE_INDENT, so
  // that the fields of a record deep in a batch keep their names in their column and leave
  // the values theirs.
  var TREE_INDENT = 10;
  function indent(depth) { return new Array(Math.min(depth, TREE_INDENT) + 1).join(' '); }
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

  // Selection: a field lights up its bytes (class hl), a byte selects the innermost field. The
  // pinned field (clicked, or reached with the keys) keeps its light while the pointer moves:
  // pointing at another field previews it (classes hv and pv) without moving the pinned one.
  // rangeOf is the range of bytes of n, drawn first unless only seen (a preview draws nothing
  // and marks at most PREVIEW_MAX bytes, so that pointing stays quick over a big payload).
  var PREVIEW_MAX = 4096;
  function rangeOf(n, seen) {
    var p = n && view.panes[n.pane];
    if (!p) return null;
    if (n.off + n.size > p.drawn && !seen) drawTo(p, n.off + n.size);
    var r = { p: p, a: Math.max(0, n.off), b: Math.min(n.off + (seen ? Math.min(n.size, PREVIEW_MAX) : n.size), p.spans.length) };
    r.c = Math.min(r.a + n.pre, r.b); // the length or count prefix ends here
    return r;
  }
  // show moves the selection's classes to n and brings its box, row and bytes into their panes
  // (all but from, the pane the click came from, which must not jump under the pointer).
  function show(n, from) {
    if (!view) return;
    var i, old = view.shown;
    if (old) for (i = 0; i < old.els.length; i++) old.els[i].classList.remove('sel');
    view.shown = n;
    var want = rangeOf(n);
    if (n) for (i = 0; i < n.els.length; i++) {
      n.els[i].classList.add('sel');
      var box = n.els[i].tagName === 'TR' ? view.fields : view.dg;
      if (box !== from || n.els[i].offsetHeight < box.clientHeight) scrollInto(box, n.els[i]);
    }
    light(view.lit, want);
    view.lit = want;
    explain(n);
    if (want && want.b > want.a && view.panesEl !== from) scrollInto(view.panesEl, want.p.spans[want.a], want.p.spans[want.b - 1]);
  }
  // explain writes the working of the selected field under the bytes: what it is, then each
  // step of its encoding (prefix, content, varint groups, zigzag, bits) with the rule that
  // reads it; [ and ] step through them, lighting each one's bytes in turn (class stp).
  function explain(n) {
    var ex = view.explain;
    ex.textContent = '';
    view.step = -1;
    view.stepEls = [];
    stepLight(null);
    if (!n) return;
    var h = el('div', 'xh');
    h.appendChild(el('b', '', n.name));
    h.appendChild(document.createTextNode(' ' + n.type + ', ' + n.size + (n.size === 1 ? ' byte' : ' bytes') + ' at ' + offText(n) + (n.val ? ': ' : '')));
    h.appendChild(el('span', 'v', n.val));
    ex.appendChild(h);
    if (n.about) ex.appendChild(el('div', 'about', n.about));
    if ((n.flags & FlagHeader || headerChild(n)) && view.m.header_why) ex.appendChild(el('div', 'why', view.m.header_why));
    var steps = n.steps || [];
    if (!steps.length) return;
    var ol = el('ol', 'steps');
    for (var i = 0; i < steps.length; i++) {
      var st = steps[i], li = el('li', 'st');
      li.setAttribute('data-step', i);
      li.appendChild(el('span', 'sl', st.label));
      li.appendChild(el('span', 'sm', st.meaning));
      if (st.rule) li.appendChild(el('span', 'sr', st.rule));
      ol.appendChild(li);
      view.stepEls.push(li);
    }
    ex.appendChild(ol);
    ex.appendChild(el('div', 'help noprint', steps.length > 1 ? '[ and ] step through the parts, lighting each one\u2019s bytes.' : '] lights these bytes.'));
  }
  // stepTo lights step i of the pinned field (-1: none).
  function stepTo(i) {
    var n = view && view.pinned;
    if (!n || !n.steps || i < -1 || i >= n.steps.length) return;
    if (view.step >= 0) view.stepEls[view.step].classList.remove('cur');
    view.step = i;
    if (i < 0) { stepLight(null); return; }
    view.stepEls[i].classList.add('cur');
    scrollInto(view.explain, view.stepEls[i]);
    var st = n.steps[i], p = view.panes[n.pane];
    // A bit lies in the field's own bytes.
    var a = st.size ? st.off : n.off, b = a + (st.size || n.size);
    stepLight(p ? { p: p, a: Math.max(0, a), b: Math.min(b, p.spans.length) } : null);
    if (view.stepLit && view.stepLit.b > view.stepLit.a) scrollInto(view.panesEl, p.spans[view.stepLit.a], p.spans[view.stepLit.b - 1]);
  }
  function stepLight(r) {
    if (!view) return;
    mark(view.stepLit, 'stp', false);
    view.stepLit = r;
    mark(r, 'stp', true);
  }
  function preview(n) {
    if (!view || view.hover === n) return;
    var i, old = view.hover;
    if (old) for (i = 0; i < old.els.length; i++) old.els[i].classList.remove('hv');
    mark(view.pv, 'pv', false);
    view.hover = n;
    view.pv = n && n !== view.pinned ? rangeOf(n, true) : null;
    if (n && n !== view.pinned) for (i = 0; i < n.els.length; i++) n.els[i].classList.add('hv');
    mark(view.pv, 'pv', true);
  }
  function mark(r, cls, on) {
    if (!r) return;
    for (var i = r.a; i < r.b; i++) {
      r.p.spans[i].classList.toggle(cls, on);
      r.p.ascii[i].classList.toggle(cls + 'a', on);
    }
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
  function pin(n, from) {
    if (!view) return;
    view.pinned = n;
    preview(null);
    show(n, from);
  }
  // paneOf is the pane (diagram, tree or bytes) that holds e.
  function paneOf(e) { return e.closest('#dg, #fields, #panes'); }
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
      if (n) pin(n, view.panesEl);
      return;
    }
    var f = nodeOf(t);
    if (f) { ev.stopPropagation(); pin(f, paneOf(t)); return; }
    var st = t.closest('#explain li[data-step]');
    if (st) { stepTo(+st.getAttribute('data-step')); return; }
    var r = t.closest('tr[data-i]');
    if (r) select(+r.getAttribute('data-i'));
  });
  document.addEventListener('mouseover', function (ev) {
    if (view) preview(nodeOf(ev.target));
  });
  document.addEventListener('keydown', function (ev) {
    var tag = (ev.target.tagName || '').toLowerCase();
    if (tag === 'input' || tag === 'select' || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if ((tag === 'button' || tag === 'summary') && (ev.key === 'Enter' || ev.key === ' ')) return; // theirs: press, open
    var pos = shown.indexOf(cur), n = view && view.pinned;
    switch (ev.key) {
      case 'ArrowDown': if (pos + 1 < shown.length) select(shown[pos + 1]); break;
      case 'ArrowUp': if (pos > 0) select(shown[pos - 1]); break;
      case 'ArrowRight': if (view) pin(view.flat[n ? Math.min(n.idx + 1, view.flat.length - 1) : 0]); break;
      case 'ArrowLeft': if (view) pin(view.flat[n ? Math.max(n.idx - 1, 0) : 0]); break;
      case 'Enter': if (n && n.kids.length) pin(n.kids[0]); else if (view && !n) pin(view.flat[0]); break;
      case 'Escape': if (n && n.parent) pin(n.parent); break;
      case '+': case '=': setZoom(zoom + 1, true); break;
      case '-': setZoom(zoom - 1, true); break;
      case ']': if (view) stepTo(view.step + 1); break;
      case '[': if (view) stepTo(view.step - 1); break;
      default: return;
    }
    ev.preventDefault();
  });

  // The conversation: a ladder (sequence) diagram of the selected message's connection, with,
  // when it talks to a consumer group, every connection that names the same group (its
  // members' connections to the coordinator). One lane per client connection and one per
  // broker address; each message an arrow (data-frame) from its source lane to its
  // destination's, in the order of the capture, its time on the left. Drawn as inline SVG,
  // every text a text node; redrawn as a live page receives messages.
  var SVG = 'http://www.w3.org/2000/svg', LADDER_MAX = 2000, ROW = 24, TIMES = 90, LANE_MIN = 150;
  function svg(tag, attrs, text) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text != null) e.textContent = text;
    return e;
  }
  // groupOf is the consumer group a message names at the top of its body (GroupId), or ''.
  function groupOf(m) {
    for (var i = 0; i < m.f.length; i++) if (m.s[m.f[i][0]] === 'GroupId' && !(m.f[i][5] & FlagHeader)) return m.s[m.f[i][4]];
    return '';
  }
  function conversation(m) {
    var streams = {}, groups = {}, i, key = function (o) { return (o.file || '') + '\u0000' + o.stream; };
    streams[key(m)] = true;
    for (i = 0; i < msgs.length; i++) if (streams[key(msgs[i])]) { var g = groupOf(msgs[i]); if (g) groups[g] = true; }
    for (i = 0; i < msgs.length; i++) if (groups[groupOf(msgs[i])]) streams[key(msgs[i])] = true;
    var out = [];
    for (i = 0; i < msgs.length; i++) if (streams[key(msgs[i])]) out.push(i);
    return { list: out, groups: Object.keys(groups) };
  }
  function ladder() {
    var box = $('ladder');
    if (box.hidden) return;
    box.textContent = '';
    if (cur < 0) { box.appendChild(el('div', 'empty', 'Select a message to see its conversation.')); return; }
    var c = conversation(msgs[cur]), list = c.list.slice(0, LADDER_MAX), lanes = [], at = {}, i;
    function lane(id, label, sub) { if (!(id in at)) { at[id] = lanes.length; lanes.push([label, sub]); } return at[id]; }
    var rows = [];
    for (i = 0; i < list.length; i++) {
      var m = msgs[list[i]], req = m.kind !== 'response';
      var client = req ? m.src : m.dst, broker = req ? m.dst : m.src;
      var cl = lane('c' + (m.file || '') + m.stream, (m.client_id || 'client') + ' #' + m.stream, client);
      var bl = lane('b' + broker, 'broker', broker);
      rows.push({ i: list[i], m: m, from: req ? cl : bl, to: req ? bl : cl });
    }
    box.appendChild(el('div', 'meta', 'Conversation of stream ' + msgs[cur].stream + (c.groups.length ? ' and of group ' + c.groups.join(', ') : '') +
      ': ' + list.length + ' messages' + (c.list.length > list.length ? ' (the first ' + LADDER_MAX + ' of ' + c.list.length + ')' : '') + '. Click an arrow to open its message.'));
    var width = Math.max(box.clientWidth - 20, TIMES + lanes.length * LANE_MIN), step = (width - TIMES) / lanes.length;
    var x = function (l) { return TIMES + step * (l + 0.5); }, top = 44, height = top + rows.length * ROW + 10;
    var g = svg('svg', { width: width, height: height, viewBox: '0 0 ' + width + ' ' + height, 'class': 'ladder' });
    for (i = 0; i < lanes.length; i++) {
      g.appendChild(svg('text', { x: x(i), y: 16, 'class': 'lane', 'text-anchor': 'middle' }, lanes[i][0]));
      g.appendChild(svg('text', { x: x(i), y: 32, 'class': 'lane sub', 'text-anchor': 'middle' }, lanes[i][1]));
      g.appendChild(svg('line', { x1: x(i), y1: top - 6, x2: x(i), y2: height, 'class': 'life' }));
    }
    for (i = 0; i < rows.length; i++) g.appendChild(arrow(rows[i], top + i * ROW + ROW / 2, x));
    box.appendChild(g);
    var now = box.querySelector('.arrow.cur');
    if (now) scrollInto(box, now);
  }
  function arrow(r, y, x) {
    var m = r.m, a = svg('g', { 'class': 'arrow ' + (m.kind === 'response' ? 'resp' : 'req') + (r.i === cur ? ' cur' : '') + (m.error ? ' err' : ''), 'data-frame': m.frame, 'data-i': r.i });
    var x1 = x(r.from), x2 = x(r.to), dir = x2 > x1 ? 1 : -1;
    a.appendChild(svg('rect', { x: 0, y: y - ROW / 2, width: '100%', height: ROW, 'class': 'hit' }));
    a.appendChild(svg('text', { x: 4, y: y + 4, 'class': 'time' }, relTime(m)));
    a.appendChild(svg('line', { x1: x1, y1: y, x2: x2 - dir * 6, y2: y }));
    a.appendChild(svg('path', { d: 'M' + x2 + ' ' + y + ' l' + (-dir * 9) + ' -5 v10 z' }));
    var label = '#' + m.frame + ' ' + apiText(m) + (m.kind === 'response' ? ' resp' : '') + ' corr ' + m.correlation_id +
      (m.latency_us != null ? ' ' + (m.latency_us / 1000).toFixed(3) + ' ms' : '');
    a.appendChild(svg('text', { x: (x1 + x2) / 2, y: y - 4, 'text-anchor': 'middle' }, label));
    return a;
  }
  $('ladder-toggle').onclick = function () {
    var box = $('ladder');
    box.hidden = !box.hidden;
    $('main').classList.toggle('conv', !box.hidden);
    this.setAttribute('aria-pressed', String(!box.hidden));
    if (box.hidden) markRow(); // the list scrolled nowhere while it was hidden
    ladder();
  };
  $('ladder').addEventListener('click', function (ev) {
    var a = ev.target.closest && ev.target.closest('[data-frame]');
    if (a) select(+a.getAttribute('data-i'));
  });

  // Controls.
  function theme() {
    var root = document.documentElement;
    var dark = root.getAttribute('data-theme') ? root.getAttribute('data-theme') === 'dark' : window.matchMedia('(prefers-color-scheme: dark)').matches;
    root.setAttribute('data-theme', dark ? 'light' : 'dark');
  }
  $('theme').onclick = theme;
  // Text size, for a projector: A- and A+ (or - and +) step through these sizes of the root
  // font, which every size on the page follows; the step is kept in the URL (#zoom=N) so that
  // a reload or a shared link keeps it.
  var ZOOMS = [11, 13, 15, 18, 21, 25, 30], ZOOM0 = 1, zoom = ZOOM0;
  function setZoom(z, keep) {
    zoom = Math.max(0, Math.min(ZOOMS.length - 1, z));
    document.documentElement.style.fontSize = ZOOMS[zoom] + 'px';
    $('zoom-out').disabled = zoom === 0;
    $('zoom-in').disabled = zoom === ZOOMS.length - 1;
    if (!keep) return;
    var h = zoom === ZOOM0 ? '' : '#zoom=' + zoom;
    try { history.replaceState(null, '', location.pathname + location.search + h); } catch (e) { location.hash = h; }
    if (view && view.pinned) show(view.pinned); // the bigger boxes may have moved it away
  }
  $('zoom-in').onclick = function () { setZoom(zoom + 1, true); };
  $('zoom-out').onclick = function () { setZoom(zoom - 1, true); };
  var zq = /(?:^#|&)zoom=(\d+)/.exec(location.hash);
  setZoom(zq ? +zq[1] : ZOOM0, false);
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
  // The notices (lost bytes, a port taken as Kafka, ...) in a closed list under the controls;
  // its summary says how many and what the first one is, so that a single one reads at once.
  var noticeCount = 0, noticeFirst = '';
  function addNotice(line, text) {
    var nd = $('notices'), s = nd.querySelector('summary');
    if (!s) { s = nd.appendChild(el('summary')); nd.hidden = false; }
    if (!noticeCount) noticeFirst = text;
    noticeCount++;
    s.textContent = noticeCount === 1 ? '1 notice: ' + noticeFirst : plural(noticeCount, 'notice') + ', the first: ' + noticeFirst;
    nd.appendChild(el('div', '', line));
  }
  for (var ni = 0; meta.notices && ni < meta.notices.length; ni++) {
    var no = meta.notices[ni];
    addNotice('#' + no.frame + '  ' + no.src + ' \u2192 ' + no.dst + '  stream ' + no.stream + '  ! ' + no.text, no.text);
  }

  // The findings panel: the doctor's findings, worst first, in a closed list under the controls
  // as the notices are. Each is a details element (its summary a severity badge, id and
  // title) holding what it means, what to check, and its evidence: a button that narrows the
  // list to the messages of its frames and selects the first, as a click on it would, and a
  // button for each frame. A frame may hold no message on the page: a notice's (TLS, lost
  // bytes), or a message left out past the limit or dropped by a live page.
  function drawFindings() {
    var fd = $('findings');
    fd.textContent = '';
    fd.hidden = !findings;
    if (!findings) return;
    var s = fd.appendChild(el('summary')), worst = findings[0];
    s.textContent = !findings.length ? 'Findings: the doctor found nothing wrong' :
      plural(findings.length, 'finding') + '; the worst (' + worst.severity + ', ' + worst.id + '): ' + worst.title;
    if (meta.live) fd.appendChild(el('div', 'meta', 'As the page was loaded: reload it for those of the messages since.'));
    for (var i = 0; i < findings.length; i++) fd.appendChild(finding(findings[i]));
  }
  function finding(f) {
    var d = el('details', 'finding'), s = d.appendChild(el('summary'));
    s.appendChild(el('span', 'sev ' + f.severity, f.severity));
    s.appendChild(el('span', 'fid', f.id));
    s.appendChild(el('span', '', f.title));
    d.appendChild(el('div', 'why', f.why));
    d.appendChild(el('div', 'advice', 'advice: ' + f.advice));
    var ev = f.evidence, p = d.appendChild(el('div', 'evidence'));
    if (!ev.frames.length) { p.appendChild(el('span', 'meta', 'no frames')); return d; }
    var all = p.appendChild(el('button', 'ev', ev.frames.length === 1 ? 'select its message' : 'select its ' + plural(ev.frames.length, 'frame')));
    all.setAttribute('data-role', 'evidence');
    all.onclick = function () { showEvidence(f, ev.frames[0]); };
    p.appendChild(el('span', 'meta', 'frames: '));
    for (var k = 0; k < ev.frames.length; k++) {
      var b = p.appendChild(el('button', 'frame', '#' + ev.frames[k]));
      b.setAttribute('data-frame', ev.frames[k]);
      b.onclick = (function (fr) { return function () { showFrame(fr); }; })(ev.frames[k]);
    }
    var more = (ev.count > ev.frames.length ? ' (' + ev.count + ' times in all)' : '') +
      (ev.streams.length ? (ev.streams.length === 1 ? ' stream ' : ' streams ') + ev.streams.join(', ') : '');
    if (more) p.appendChild(el('span', 'meta', more));
    d.appendChild(el('div', 'note meta')).setAttribute('aria-live', 'polite');
    return d;
  }
  // firstOf is the first message listed of frame (-1: none).
  function firstOf(frame) {
    for (var j = 0; j < shown.length; j++) if (msgs[shown[j]].frame === frame) return shown[j];
    return -1;
  }
  // showEvidence narrows the list to the messages of f's frames and selects the one of first.
  function showEvidence(f, first) {
    var set = {}, any = false;
    for (var k = 0; k < f.evidence.frames.length; k++) set[f.evidence.frames[k]] = true;
    for (var i = 0; i < msgs.length && !any; i++) any = set[msgs[i].frame] === true;
    if (!any) { noEvidence(f, 'No message of its frames is on this page: they are notices, or messages left out.'); return; }
    evFrames = set;
    $('ev-text').textContent = 'The list shows the messages of the frames of ' + f.id + ': ' + f.title;
    $('evbar').hidden = false;
    // The message of first is made the selection before the list is redrawn, which then keeps
    // it rather than select another, and it is drawn once.
    var at = -1;
    for (var j = 0; j < msgs.length && at < 0; j++) if (msgs[j].frame === first) at = j;
    if (at >= 0) cur = at;
    relist();
    if (at >= 0 && shown.indexOf(at) >= 0) select(at);
  }
  // showFrame selects the message of frame in the list as it is, or, when the list's filters
  // hide it, with every message shown.
  function showFrame(frame) {
    var at = firstOf(frame);
    if (at < 0 && evFrames) { clearEvidence(); at = firstOf(frame); }
    if (at >= 0) { select(at); return; }
    var f = null;
    for (var i = 0; i < findings.length && !f; i++) if (findings[i].evidence.frames.indexOf(frame) >= 0) f = findings[i];
    noEvidence(f, 'Frame ' + frame + ' holds no message listed: a notice, a message left out, or one the filters hide.');
  }
  function noEvidence(f, text) {
    var notes = $('findings').querySelectorAll('.finding');
    for (var i = 0; i < notes.length; i++) {
      var n = notes[i].querySelector('.note');
      if (findings[i] === f && n) n.textContent = text;
    }
  }
  function clearEvidence() {
    evFrames = null;
    $('evbar').hidden = true;
    relist();
  }
  $('ev-all').onclick = clearEvidence;
  drawFindings();

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
      addNotice('#' + no.frame + '  ' + no.src + ' \u2192 ' + no.dst + '  ! ' + no.text, no.text);
    });
  }
  if (meta.live) {
    var pb = $('pause');
    pb.hidden = false;
    $('tail-l').hidden = false;
    $('tail').onchange = function () { if (this.checked) follow(); };
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
          findings = res.findings || null; evFrames = null; $('evbar').hidden = true;
          drawFindings();
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
