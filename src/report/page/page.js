/*
 * The gpumemguard report page: plain JavaScript, no library, nothing fetched.
 * It reads the JSON report embedded in the page (#gmg-data) and draws it:
 * header facts, per device a timeline, flame graphs (icicles) of live bytes
 * and of what was live at the peak, the groups as a table, owners, and the
 * fragmentation map. Every name from the report is set as text
 * (textContent, SVG text nodes, canvas fillText), never as markup.
 */
'use strict';
(function () {
  var t0 = window.performance ? performance.now() : 0;
  var app = document.getElementById('app');
  var SVGNS = 'http://www.w3.org/2000/svg';

  function el(tag, props, kids) {
    var e = document.createElement(tag);
    if (props) {
      for (var k in props) {
        if (!Object.prototype.hasOwnProperty.call(props, k)) continue;
        var v = props[k];
        if (k === 'text') e.textContent = v;
        else if (k === 'cls') e.className = v;
        else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v);
      }
    }
    (kids || []).forEach(function (c) {
      if (c !== null && c !== undefined) e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    });
    return e;
  }
  function svg(tag, attrs, text) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, String(attrs[k]));
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svgTitle(node, text) { node.appendChild(svg('title', {}, text)); return node; }
  function empty(text) { return el('p', { cls: 'empty', text: text }); }
  function card(title, kids) { return el('section', { cls: 'card' }, [el('h2', { text: title })].concat(kids)); }

  /* Sizes as the text report writes them, to the character (gmg_fmt_size in
   * src/base/buf.c): "3.0 MiB (3145728 bytes)"; 1048575 bytes is 1.0 MiB,
   * not 1024.0 KiB; a tenth that ties rounds to even, as printf's "%.1f"
   * does (2359296 bytes, 2.25 MiB exactly, is 2.2 MiB). */
  var UNITS = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  function tenths(v) {
    /* v is a whole number of quarters exactly when v * 10 ends in .5 (v is
       bytes over a power of two, so v * 4 and then v * 10 are exact) */
    if (Number.isInteger(v * 4) && (v * 4) % 2 === 1) {
      var t = Math.floor(v * 10);
      if (t % 2) t++;
      return Math.floor(t / 10) + '.' + (t % 10);
    }
    return v.toFixed(1); /* exact otherwise: the nearest tenth of v's value */
  }
  function short(n) {
    n = Number(n) || 0;
    if (n < 1024) return n + (n === 1 ? ' byte' : ' bytes');
    var v = n / 1024, u = 0;
    while (v >= 1023.95 && u < UNITS.length - 1) { v /= 1024; u++; }
    return tenths(v) + ' ' + UNITS[u];
  }
  /* the bytes in full: past 2^53 a number's every digit as the report wrote
   * them. JSON.parse rounds such a number; where the browser gives the
   * reviver its source text, the value becomes a Number object that carries
   * it (`exact`), and reads as the number everywhere else. */
  function whole(n) {
    if (n instanceof Number && n.exact) return n.exact;
    n = Number(n);
    return Number.isSafeInteger(n) || !Number.isInteger(n) ? String(n) : BigInt(n).toString();
  }
  function size(n) {
    var w = whole(n);
    n = Number(n) || 0;
    return n < 1024 ? short(n) : short(n) + ' (' + w + ' bytes)';
  }
  function plural(n, word) { return n + ' ' + word + (Number(n) === 1 ? '' : 's'); }
  function pct(a, b) { return b > 0 ? (100 * a / b).toFixed(a / b < 0.1 ? 2 : 1) + '%' : '-'; }

  function fatal(msg) {
    app.textContent = '';
    app.appendChild(el('h1', { text: 'gpumemguard report' }));
    app.appendChild(el('p', { cls: 'error', id: 'gmg-error', text: msg }));
  }

  var R;
  try {
    var text = document.getElementById('gmg-data').textContent;
    /* a reviver slows the parse of a big report twofold: only where a number may be past 2^53 (16 digits) */
    R = /[0-9]{16}/.test(text) ? JSON.parse(text, function (k, v, ctx) {
      if (typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v) && ctx && /^[0-9]+$/.test(ctx.source)) {
        var o = new Number(v); /* eslint-disable-line no-new-wrappers */
        o.exact = ctx.source;
        return o;
      }
      return v;
    }) : JSON.parse(text);
  } catch (e) {
    fatal('The data embedded in this page is not JSON: ' + e.message);
    return;
  }
  if (!R || typeof R !== 'object' || R.tool !== 'gpumemguard') {
    fatal('The data embedded in this page is not a gpumemguard report.');
    return;
  }

  /* ---- frames and stacks ---- */
  function frameName(f) {
    if (!f) return '??';
    if (f.lang === 'python') return (f['function'] || '??') + ' (' + (f.file || '?') + ':' + f.line + ')';
    if (f['function']) return f['function'];
    if (f.module) return f.module + '+' + f.offset;
    return f.pc || '??';
  }
  function frameDetail(f) {
    if (!f) return '';
    if (f.lang === 'python') return 'File "' + f.file + '", line ' + f.line + ', in ' + f['function'];
    var s = (f['function'] || '??');
    if (f.file) s += ' ' + f.file + ':' + f.line;
    if (f.module) s += ' (' + f.module + '+' + f.offset + (f.unloaded ? ', unloaded' : '') + ')';
    return s;
  }
  /* Outermost first: the Python call path, then the native one. The report
   * lists both innermost first, the Python frames before the native. */
  function callPath(frames) {
    var py = [], nat = [];
    (frames || []).forEach(function (f) { (f.lang === 'python' && !nat.length ? py : nat).push(f); });
    return py.reverse().concat(nat.reverse());
  }
  function site(frames) {
    var f = (frames || [])[0];
    return f ? frameDetail(f) : '(no stack recorded)';
  }
  function isRange(g) { return g.api === 'cuMemAddressReserve' || g.api === 'cuMemMap'; }
  /* What a group adds to a total: a pool's segment that NVTX regions lie in
   * less what they hold (regions_bytes), as the regions are groups of their
   * own; so every picture sums to the bytes in use. A folded rest alike. */
  function net(g) { return Math.max(0, (g.bytes || 0) - (g.regions_bytes || 0)); }

  /* ---- header ---- */
  var leaksWord = R.trigger === 'exit' ? 'leak' : 'live';
  function header() {
    /* the program with its arguments where the report has them */
    var prog = R.cmdline || (Array.isArray(R.argv) ? R.argv.join(' ') : R.command) || R.exe || '?';
    app.appendChild(el('h1', { text: 'gpumemguard report' }));
    app.appendChild(el('p', { cls: 'sub', id: 'gmg-program', text: prog }));
    var facts = el('dl', { cls: 'facts', id: 'gmg-facts' });
    function fact(k, v, id) { facts.appendChild(el('dt', { text: k })); facts.appendChild(el('dd', id ? { text: v, id: id } : { text: v })); }
    fact('program', prog);
    if (R.exe && R.exe !== prog) fact('executable', R.exe);
    fact('gpumemguard', String(R.version || '?'));
    fact('report', R.trigger + (R.dump ? ', dump ' + R.dump : '') + ', pid ' + R.pid);
    var t = R.totals || {};
    fact('live', size(t.live_bytes) + ' in ' + plural(t.live_allocations || 0, 'allocation'), 'gmg-live');
    if (t.reclaimed_allocations) fact('reclaimed by context teardown', size(t.reclaimed_bytes) + ' in ' + plural(t.reclaimed_allocations, 'allocation'));
    fact('refused', String(t.refused || 0), 'gmg-refused');
    fact('allocations made', String(t.allocations_made || 0));
    if (t.unknown_frees) fact('unknown frees', String(t.unknown_frees));
    if (Array.isArray(R.growth)) {
      /* every group that grew: those listed and the smaller ones folded */
      var gb = 0, gc = 0, gn = R.growth.length, gf = R.growth_folded;
      R.growth.forEach(function (g) { gb += g.bytes; gc += g.count; });
      if (gf && gf.groups) { gb += gf.bytes; gc += gf.count; gn += gf.groups; }
      fact('grew since the previous dump', size(gb) + ' in ' + plural(gc, 'allocation') + ', ' + plural(gn, 'group') +
        (gf && gf.groups ? ' (' + plural(gf.groups, 'smaller group') + ' not listed in this page)' : ''), 'gmg-growth');
    }
    (R.devices || []).forEach(function (d) {
      var s = 'limit ' + (d.limit ? size(d.limit) : 'none') + ', in use ' + size(d.in_use) + ', peak ' + size(d.peak) +
              ', refused ' + d.refused;
      if (d.driver_oom !== undefined) s += ', driver out of memory ' + d.driver_oom;
      fact('device ' + d.device, s, 'gmg-dev-' + d.device);
    });
    if (t.host_driver_oom)
      fact('pinned host memory', 'the driver refused ' + plural(t.host_driver_oom, 'allocation') + ': out of memory', 'gmg-host-oom');
    if (Array.isArray(R.suppressions) && R.suppressions.length) {
      var sb = 0, sc = 0;
      R.suppressions.forEach(function (u) { sb += u.bytes || 0; sc += u.count || 0; });
      fact('suppressed', size(sb) + ' in ' + plural(sc, 'live allocation') + ', not listed (GPUMEM_SUPPRESSIONS: ' +
        R.suppressions.map(function (u) { return u.template; }).join(', ') + ')', 'gmg-suppressed');
    }
    if (R.group) {
      fact('group', R.group.name + ', ' + plural(R.group.members, 'member'));
      (R.group.devices || []).forEach(function (d) {
        fact('group, device ' + d.device, 'limit ' + (d.limit ? size(d.limit) : 'none') + ', in use ' + size(d.in_use) + ', peak ' + size(d.peak));
      });
    } else {
      fact('group', R.group === null ? 'none' : 'not in this report');
    }
    app.appendChild(card('Summary', [facts]));
    if (R.schema > 1) app.appendChild(el('p', { cls: 'warn', text: 'This report has schema ' + R.schema + ', newer than this page knows (1): parts may be missing.' }));
    if (R.incomplete && R.incomplete.length)
      app.appendChild(el('p', { cls: 'warn', text: 'This report is incomplete (the guard ran out of memory or room): ' + R.incomplete.join(', ') + '.' }));
    if (R.dynamic_symbols_only)
      app.appendChild(el('p', { cls: 'warn', text: 'Frames are named from the dynamic symbol tables only: ' + (R.debuginfo_error || '') }));
  }

  /* ---- timeline ---- */
  var EVENT_STYLE = {
    refusal: { color: 'var(--limit)', label: 'refusal' },
    driver_oom: { color: 'var(--oom)', label: 'driver out of memory' },
    dump: { color: 'var(--dump)', label: 'dump' },
    peak: { color: 'var(--peak)', label: 'peak' }
  };
  function seconds(ms) { return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + ' s'; }
  function timeline(dev) {
    var tl = R.timeline;
    var body = [];
    var series = tl && (tl.devices || []).filter(function (s) { return s.device === dev.device; })[0];
    var gseries = tl && Array.isArray(tl.group) ? tl.group.filter(function (s) { return s.device === dev.device; })[0] : null;
    /* an event of no one device (a dump: device -1) is marked on each */
    var events = tl ? (tl.events || []).filter(function (e) { return e.device === dev.device || !(e.device >= 0); }) : [];
    if (!tl) return [empty('No timeline: this report carries no samples of in-use bytes over time.')];
    if ((!series || !series.samples.length) && !events.length)
      return [empty('No samples for this device: the run ended before the first sample was taken.')];
    var samples = series ? series.samples : [];
    var gsamples = gseries ? gseries.samples : [];
    /* at least 1 KiB: a device that held nothing (or a few bytes) gets an
       axis of five distinct sizes, not "0 bytes | 0 bytes | 1 byte ..." */
    var tmax = 1, ymax = Math.max(1024, dev.peak || 0, dev.limit || 0);
    samples.concat(gsamples).forEach(function (s) { tmax = Math.max(tmax, s[0]); ymax = Math.max(ymax, s[1]); });
    /* a peak's bytes are in use; a refusal's or an out of memory's are the call's (marked at the top): a
       refused 1 TiB must not flatten the in-use line */
    events.forEach(function (e) { tmax = Math.max(tmax, e.t_ms); if (e.kind === 'peak') ymax = Math.max(ymax, e.bytes || 0); });
    if (R.group && R.group.devices) R.group.devices.forEach(function (d) { if (d.device === dev.device) ymax = Math.max(ymax, d.peak || 0, d.limit || 0); });
    ymax *= 1.08;
    var W = 1000, H = 230, L = 70, RR = 12, T = 12, B = 28;
    function X(t) { return L + (W - L - RR) * t / tmax; }
    function Y(v) { return T + (H - T - B) * (1 - v / ymax); }
    var s = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'class': 'timeline' });
    s.appendChild(svg('rect', { x: L, y: T, width: W - L - RR, height: H - T - B, fill: '#fbfcfe', stroke: '#d9dde5' }));
    for (var i = 0; i <= 4; i++) {
      var v = ymax / 1.08 * i / 4;
      s.appendChild(svg('line', { x1: L, x2: W - RR, y1: Y(v), y2: Y(v), stroke: '#eceef2' }));
      s.appendChild(svg('text', { x: L - 6, y: Y(v) + 4, 'text-anchor': 'end' }, short(Math.round(v))));
    }
    for (i = 0; i <= 5; i++) { /* the last label ends at the right edge; a short run's in ms */
      var tt = tmax * i / 5;
      s.appendChild(svg('text', { x: X(tt), y: H - 8, 'text-anchor': i === 5 ? 'end' : 'middle' },
        tmax < 1000 ? tt.toFixed(tmax < 10 ? 1 : 0) + ' ms' : seconds(tt)));
    }
    function line(pts, color, dash, fill) {
      if (!pts.length) return;
      if (pts.length === 1) { /* one sample: a point, no path to draw */
        s.appendChild(svg('circle', { cx: X(pts[0][0]).toFixed(1), cy: Y(pts[0][1]).toFixed(1), r: 3.5, fill: color }));
        return;
      }
      var d = pts.map(function (p, k) { return (k ? 'L' : 'M') + X(p[0]).toFixed(1) + ' ' + Y(p[1]).toFixed(1); }).join(' ');
      if (fill) s.appendChild(svg('path', { d: d + ' L' + X(pts[pts.length - 1][0]).toFixed(1) + ' ' + Y(0) + ' L' + X(pts[0][0]).toFixed(1) + ' ' + Y(0) + ' Z', fill: fill, stroke: 'none' }));
      s.appendChild(svg('path', { d: d, fill: 'none', stroke: color, 'stroke-width': 1.6, 'stroke-dasharray': dash || 'none' }));
    }
    line(samples, 'var(--use)', null, 'rgba(47,111,208,.12)');
    line(gsamples, 'var(--group)', '5 3');
    if (dev.limit) {
      s.appendChild(svg('line', { x1: L, x2: W - RR, y1: Y(dev.limit), y2: Y(dev.limit), stroke: 'var(--limit)', 'stroke-dasharray': '6 4' }));
      s.appendChild(svg('text', { x: W - RR - 4, y: Y(dev.limit) - 4, 'text-anchor': 'end', fill: 'var(--limit)', style: 'fill: var(--limit)' }, 'limit ' + short(dev.limit)));
    }
    events.forEach(function (e) {
      var st = EVENT_STYLE[e.kind] || { color: '#555', label: e.kind };
      var x = X(e.t_ms), y = Y(e.bytes || 0);
      var g = svg('g', {});
      g.appendChild(svg('line', { x1: x, x2: x, y1: T, y2: H - B, stroke: st.color, 'stroke-width': 1, opacity: 0.5 }));
      if (e.kind === 'peak') g.appendChild(svg('circle', { cx: x, cy: y, r: 5, fill: st.color }));
      else g.appendChild(svg('path', { d: 'M' + (x - 5) + ' ' + T + ' L' + (x + 5) + ' ' + T + ' L' + x + ' ' + (T + 9) + ' Z', fill: st.color })); /* at the top: its bytes are the call's, not the in-use */
      svgTitle(g, st.label + ' at ' + (tmax < 1000 ? e.t_ms + ' ms' : seconds(e.t_ms)) + (e.bytes !== undefined ? ': ' + size(e.bytes) : ''));
      s.appendChild(g);
    });
    body.push(s);
    var legend = el('div', { cls: 'legend' }, [
      el('span', {}, [el('i', { style: 'background: var(--use)' }), 'in use']),
      gsamples.length ? el('span', {}, [el('i', { style: 'background: var(--group)' }), 'group in use']) : null,
      dev.limit ? el('span', {}, [el('i', { style: 'background: var(--limit)' }), 'limit']) : null
    ]);
    var counts = Object.create(null);
    events.forEach(function (e) { counts[e.kind] = (counts[e.kind] || 0) + 1; });
    Object.keys(counts).forEach(function (k) {
      var st = EVENT_STYLE[k] || { color: '#555', label: k };
      legend.appendChild(el('span', {}, [el('i', { style: 'background: ' + st.color }), st.label + ' \u00d7' + counts[k]]));
    });
    body.push(legend);
    body.push(el('p', { cls: 'note', text: plural(samples.length, 'sample') + (tl.interval_ms ? ', every ' + tl.interval_ms + ' ms' : '') + (tl.start_unix_ms ? ', from ' + new Date(tl.start_unix_ms).toISOString() : '') +
      (tl.events_dropped ? '; ' + plural(tl.events_dropped, 'more event') + ' not kept (the list was full)' : '') }));
    return body;
  }
  function timelines() {
    var devs = R.devices || [];
    if (!devs.length) { app.appendChild(card('In use over time', [empty('No device was used.')])); return; }
    devs.forEach(function (d) {
      app.appendChild(card('Device ' + d.device + ': in use over time', timeline(d)));
    });
  }

  /* ---- flame graph (icicle) ---- */
  function makeTree(groups, folded) {
    var root = { name: 'all', detail: '', bytes: 0, count: 0, kids: {}, kind: 'root' };
    groups.forEach(function (g) {
      var node = root, bytes = net(g);
      root.bytes += bytes; root.count += g.count;
      var path = callPath(g.frames);
      path.forEach(function (f) {
        var key = (f.lang || '') + '\u0000' + frameDetail(f);
        var k = node.kids[key];
        if (!k) k = node.kids[key] = { name: frameName(f), detail: frameDetail(f), bytes: 0, count: 0, kids: {}, kind: f.lang || 'native' };
        k.bytes += bytes; k.count += g.count;
        node = k;
      });
      var leafKey = 'api\u0000' + g.api + g.device;
      var leaf = node.kids[leafKey];
      if (!leaf) leaf = node.kids[leafKey] = { name: g.api + ', device ' + g.device, detail: (g.pool ? 'retained by pool ' + g.pool : '') + (g.owner ? (g.pool ? '; ' : '') + 'owner ' + g.owner : ''), bytes: 0, count: 0, kids: {}, kind: 'api' };
      leaf.bytes += bytes; leaf.count += g.count;
    });
    if (folded && folded.groups) {
      root.bytes += net(folded); root.count += folded.count;
      root.kids['other'] = { name: 'other: ' + plural(folded.groups, 'smaller group'), detail: 'groups below the biggest, folded into one to keep the page small', bytes: net(folded), count: folded.count, kids: {}, kind: 'other' };
    }
    (function finish(n, parent, depth) {
      n.parent = parent; n.depth = depth;
      n.list = Object.keys(n.kids).map(function (k) { return n.kids[k]; }).sort(function (a, b) { return b.bytes - a.bytes; });
      n.height = 0;
      n.list.forEach(function (c) { finish(c, n, depth + 1); n.height = Math.max(n.height, c.height + 1); });
    })(root, null, 0);
    return root;
  }
  function hue(s) { var h = 0; for (var i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) >>> 0; return h; }
  function color(n) {
    var h = hue(n.name);
    if (n.kind === 'root') return '#c9ced8';
    if (n.kind === 'api') return '#b0b7c3';
    if (n.kind === 'other') return '#dfe3ea';
    if (n.kind === 'python') return 'hsl(' + (200 + h % 30) + ',60%,' + (62 + h % 12) + '%)';
    return 'hsl(' + (18 + h % 30) + ',78%,' + (60 + h % 12) + '%)';
  }
  var tip = null;
  function showTip(ev, lines) {
    if (!tip) { tip = el('div', { cls: 'tip' }); document.body.appendChild(tip); }
    if (!lines) { tip.style.display = 'none'; return; }
    tip.textContent = lines.join('\n');
    tip.style.display = 'block';
    var x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth) x = Math.max(0, ev.clientX - tip.offsetWidth - 10);
    if (y + tip.offsetHeight > window.innerHeight) y = Math.max(0, ev.clientY - tip.offsetHeight - 10);
    tip.style.left = x + 'px'; tip.style.top = y + 'px';
  }
  function flame(groups, folded, what) {
    var box = el('div', { cls: 'flame' });
    box.draw = function () {};
    if (!groups.length && !(folded && folded.groups)) { box.appendChild(empty('Nothing ' + what + '.')); return box; }
    var root = makeTree(groups, folded);
    var ROW = 18;
    var bar = el('div', { cls: 'bar' });
    var reset = el('button', { text: 'whole graph', onclick: function () { zoom = root; draw(); } });
    var crumb = el('span', { cls: 'note' });
    bar.appendChild(reset); bar.appendChild(crumb);
    box.appendChild(bar);
    var canvas = el('canvas', {});
    box.appendChild(canvas);
    box.appendChild(el('p', { cls: 'note', text: 'Outermost frame at the top: the Python call path, then the native one, down to the driver call. Width is live bytes. Click a frame to zoom in, the top rows to zoom out; hover for bytes, count and file:line.' }));
    var zoom = root, rects = [];
    function draw() {
      var W = Math.max(300, box.clientWidth || 1100);
      var chain = [];
      for (var a = zoom.parent; a; a = a.parent) chain.unshift(a);
      var rows = chain.length + zoom.height + 1;
      var dpr = window.devicePixelRatio || 1;
      canvas.width = W * dpr; canvas.height = rows * ROW * dpr;
      canvas.style.height = rows * ROW + 'px';
      var c = canvas.getContext('2d');
      c.setTransform(dpr, 0, 0, dpr, 0, 0);
      c.font = '11px ui-monospace, "DejaVu Sans Mono", monospace';
      c.textBaseline = 'middle';
      rects = [];
      function box1(n, x, y, w) {
        c.fillStyle = color(n);
        c.fillRect(x, y, Math.max(w - 1, 0.5), ROW - 1);
        rects.push({ n: n, x: x, y: y, w: w });
        if (w > 24) {
          c.fillStyle = '#1d2330';
          var label = n.name, max = w - 6;
          if (c.measureText(label).width > max) {
            var lo = 0, hi = label.length;
            while (lo < hi) { var m = (lo + hi + 1) >> 1; if (c.measureText(label.slice(0, m) + '\u2026').width <= max) lo = m; else hi = m - 1; }
            label = lo ? label.slice(0, lo) + '\u2026' : '';
          }
          if (label) c.fillText(label, x + 3, y + ROW / 2);
        }
      }
      chain.forEach(function (n, i) { box1(n, 0, i * ROW, W); });
      (function lay(n, x, w, depth) {
        box1(n, x, (chain.length + depth) * ROW, w);
        var cx = x;
        n.list.forEach(function (k) {
          var kw = n.bytes ? w * k.bytes / n.bytes : 0;
          if (kw >= 0.5) lay(k, cx, kw, depth + 1);
          cx += kw;
        });
      })(zoom, 0, W, 0);
      crumb.textContent = zoom === root ? '' : 'zoomed to ' + zoom.name + ' (' + short(zoom.bytes) + ')';
    }
    function at(ev) {
      var r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
      for (var i = rects.length - 1; i >= 0; i--) {
        var q = rects[i];
        if (x >= q.x && x < q.x + q.w && y >= q.y && y < q.y + ROW) return q.n;
      }
      return null;
    }
    canvas.addEventListener('mousemove', function (ev) {
      var n = at(ev);
      if (!n) { showTip(ev, null); return; }
      var lines = [n.name];
      if (n.detail && n.detail !== n.name) lines.push(n.detail);
      lines.push(size(n.bytes) + ' in ' + plural(n.count, 'allocation') + ' (' + pct(n.bytes, root.bytes) + ')');
      showTip(ev, lines);
    });
    canvas.addEventListener('mouseleave', function (ev) { showTip(ev, null); });
    canvas.addEventListener('click', function (ev) { var n = at(ev); if (n) { zoom = n; draw(); } });
    window.addEventListener('resize', draw);
    box.draw = draw;
    return box;
  }
  var toDraw = [];
  function allocGroups(list) { return (list || []).filter(function (g) { return !isRange(g); }); }
  function flames() {
    var live = allocGroups(R.live);
    var f = flame(live, R.live_folded, 'is live');
    toDraw.push(f);
    var kids = [f];
    if (R.live_folded && R.live_folded.groups)
      kids.unshift(el('p', { cls: 'note', text: plural(R.live_folded.groups, 'smaller group') + ' (' + size(net(R.live_folded)) + ') are folded into "other" to keep this page small; the JSON report lists them all.' }));
    app.appendChild(card('Live memory by call stack', kids));
    var peaks = [];
    if (!Array.isArray(R.at_peak)) {
      peaks.push(empty('This report does not say what was live at the peak.'));
    } else if (!R.at_peak.length) {
      peaks.push(empty('No device reached a peak above zero.'));
    } else {
      R.at_peak.forEach(function (p) {
        peaks.push(el('h3', { text: 'Device ' + p.device + ': ' + size(p.bytes) + ' at the peak' }));
        var pf = flame(allocGroups(p.groups), p.groups_folded, 'was live at the peak');
        toDraw.push(pf);
        peaks.push(pf);
      });
    }
    if (Array.isArray(R.at_peak_since_dump)) {
      peaks.push(el('h3', { text: 'Since the previous dump' }));
      if (!R.at_peak_since_dump.length) peaks.push(empty('No peak since the previous dump.'));
      R.at_peak_since_dump.forEach(function (p) {
        peaks.push(el('h3', { text: 'Device ' + p.device + ': ' + size(p.bytes) + ' at the peak since the previous dump' }));
        var sf = flame(allocGroups(p.groups), p.groups_folded, 'was live at that peak');
        toDraw.push(sf);
        peaks.push(sf);
      });
    }
    app.appendChild(card('Live at the peak', peaks));
  }

  /* ---- the groups as a table ---- */
  function groupRows() {
    var rows = [];
    function add(list, kind) {
      (list || []).forEach(function (g) {
        var k = kind;
        if (kind === 'live') k = isRange(g) ? 'range' : g.pool ? 'retained' : leaksWord;
        rows.push({ g: g, kind: k });
      });
    }
    add(R.live, 'live'); add(R.address_ranges, 'range'); add(R.reclaimed, 'reclaimed');
    return rows;
  }
  var KIND_LABEL = { leak: 'leak', live: 'live', retained: 'retained', reclaimed: 'reclaimed', range: 'address range' };
  function kindText(r) { return r.kind === 'retained' ? 'retained by pool ' + r.g.pool : KIND_LABEL[r.kind]; }
  function table() {
    var rows = groupRows();
    var kids = [];
    var sums = Object.create(null);
    rows.forEach(function (r) { var s = sums[r.kind] || (sums[r.kind] = { bytes: 0, count: 0, groups: 0 }); s.bytes += net(r.g); s.count += r.g.count; s.groups++; });
    var line = el('div', { cls: 'fragnums', id: 'gmg-kinds' });
    ['leak', 'live', 'retained', 'reclaimed', 'range'].forEach(function (k) {
      if (!sums[k]) return;
      var name = k === 'leak' ? 'Leaks' : k === 'live' ? 'Live' : k === 'retained' ? 'Retained by pools' : k === 'reclaimed' ? 'Reclaimed by context teardown' : 'Address ranges';
      line.appendChild(el('span', {}, [el('b', { text: name + ': ' }), size(sums[k].bytes) + ' in ' + plural(sums[k].count, 'allocation') + ', ' + plural(sums[k].groups, 'group')]));
    });
    /* the lists' folded rests (their kinds unknown): so that the line sums to the report's */
    var rest = { bytes: 0, count: 0, groups: 0 };
    ['live_folded', 'reclaimed_folded', 'address_ranges_folded'].forEach(function (k) {
      var f = R[k];
      if (f && f.groups) { rest.bytes += net(f); rest.count += f.count || 0; rest.groups += f.groups; }
    });
    if (rest.groups)
      line.appendChild(el('span', {}, [el('b', { text: 'Not listed (smaller groups): ' }), size(rest.bytes) + ' in ' + plural(rest.count, 'allocation') + ', ' + plural(rest.groups, 'group')]));
    if (!rows.length) { app.appendChild(card('Groups', [empty(R.trigger === 'exit' ? 'Nothing live at exit: no leak.' : 'Nothing live.')])); return; }
    kids.push(line);
    var filter = el('input', { type: 'search', placeholder: 'filter: function, file, module, API, owner', 'aria-label': 'filter' });
    var which = 'all';
    var bar = el('div', { cls: 'bar' }, [filter]);
    var buttons = [];
    ['all'].concat(Object.keys(sums)).forEach(function (k) {
      var b = el('button', { text: k === 'all' ? 'all' : KIND_LABEL[k], onclick: function () { which = k; buttons.forEach(function (x) { x.className = ''; }); b.className = 'on'; render(); } });
      if (k === 'all') b.className = 'on';
      buttons.push(b); bar.appendChild(b);
    });
    kids.push(bar);
    var cols = [
      { key: 'kind', label: 'kind', val: function (r) { return kindText(r); } },
      { key: 'bytes', label: 'bytes', num: true, val: function (r) { return r.g.bytes; } },
      { key: 'count', label: 'allocations', num: true, val: function (r) { return r.g.count; } },
      { key: 'api', label: 'API', val: function (r) { return r.g.api; } },
      { key: 'device', label: 'device', num: true, val: function (r) { return r.g.device; } },
      { key: 'owner', label: 'owner', val: function (r) { return r.g.owner || ''; } },
      { key: 'site', label: 'allocated from (innermost frame)', val: function (r) { return site(r.g.frames); } }
    ];
    var sortCol = cols[1], asc = false;
    var thead = el('tr');
    cols.forEach(function (c) {
      var th = el('th', { text: c.label, cls: c.num ? 'num' : '' });
      th.addEventListener('click', function () { if (sortCol === c) asc = !asc; else { sortCol = c; asc = !!(!c.num); } render(); });
      c.th = th;
      thead.appendChild(th);
    });
    var tbody = el('tbody');
    var tbl = el('table', { id: 'gmg-groups' }, [el('thead', {}, [thead]), tbody]);
    var more = el('p', { cls: 'note' });
    kids.push(tbl, more);
    rows.forEach(function (r) { r.hay = [kindText(r), r.g.api, r.g.owner || '', 'device ' + r.g.device].concat((r.g.frames || []).map(frameDetail)).join('\n').toLowerCase(); });
    var LIMIT = 300;
    function render() {
      var q = filter.value.trim().toLowerCase();
      var list = rows.filter(function (r) { return (which === 'all' || r.kind === which) && (!q || r.hay.indexOf(q) >= 0); });
      list.sort(function (a, b) {
        var x = sortCol.val(a), y = sortCol.val(b);
        var d = sortCol.num ? x - y : String(x).localeCompare(String(y));
        return d ? (asc ? d : -d) : b.g.bytes - a.g.bytes; /* ties: the biggest first, either way */
      });
      cols.forEach(function (c) { c.th.className = (c.num ? 'num ' : '') + (c === sortCol ? 'sorted' + (asc ? ' asc' : '') : ''); });
      tbody.textContent = '';
      list.slice(0, LIMIT).forEach(function (r) {
        var tr = el('tr', { cls: 'row' }, [
          el('td', {}, [el('span', { cls: 'kind ' + r.kind, text: kindText(r) })]),
          el('td', { cls: 'num', text: whole(r.g.bytes), title: size(r.g.bytes) }),
          el('td', { cls: 'num', text: String(r.g.count) }),
          el('td', { text: r.g.api }),
          el('td', { cls: 'num', text: String(r.g.device) }),
          el('td', { text: r.g.owner || '' }),
          el('td', { cls: 'frame', text: site(r.g.frames) })
        ]);
        var open = null;
        tr.addEventListener('click', function () {
          if (open) { open.remove(); open = null; return; }
          var fr = (r.g.frames || []).map(function (f, i) { return (f.lang === 'python' ? '  ' : '  #' + i + ' ') + frameDetail(f); });
          var held = r.g.regions_bytes ? ' (' + size(r.g.regions_bytes) + ' of it held by NVTX regions, listed as groups of their own)' : '';
          open = el('tr', {}, [el('td', { colspan: cols.length, cls: 'frames', text: size(r.g.bytes) + ' in ' + plural(r.g.count, 'allocation') + ' (' + r.g.api + ', device ' + r.g.device + ')' + held + ' allocated from:\n' + (fr.length ? fr.join('\n') : '  (no stack recorded)') })]);
          tr.after(open);
        });
        tbody.appendChild(tr);
      });
      more.textContent = list.length > LIMIT ? 'Showing the first ' + LIMIT + ' of ' + list.length + ' groups: filter or sort to see others.' :
        list.length ? plural(list.length, 'group') + '. Click a row for its whole stack.' : 'No group matches.';
    }
    filter.addEventListener('input', render);
    render();
    /* each list's folded rest, said as the live list's is */
    [['live_folded', 'live'], ['reclaimed_folded', 'reclaimed'], ['address_ranges_folded', 'address range']].forEach(function (w) {
      var folded = R[w[0]];
      if (folded && folded.groups) kids.push(el('p', { cls: 'note', text: plural(folded.groups, 'smaller ' + w[1] + ' group') + ' (' + size(net(folded)) + ' in ' + plural(folded.count, 'allocation') + ') are not listed in this page.' }));
    });
    app.appendChild(card('Groups, by call stack', kids));
  }

  /* ---- owners ---- */
  function owners() {
    var kids = [];
    var list = Array.isArray(R.owners) ? R.owners : null;
    if (!list) {
      var by = Object.create(null); /* owners named like an object's own properties (toString, __proto__) are owners too */
      (R.live || []).forEach(function (g) {
        if (!g.owner) return;
        var o = by[g.owner] || (by[g.owner] = { owner: g.owner, bytes: 0, count: 0, retained: 0 });
        o.bytes += net(g); o.count += g.count; if (g.pool) o.retained += net(g);
      });
      list = Object.keys(by).map(function (k) { return by[k]; });
    }
    if (!list.length) { app.appendChild(card('By owner', [empty('This report names no owners (the library that reached the driver for each allocation).')])); return; }
    var keys = [];
    list.forEach(function (o) { Object.keys(o).forEach(function (k) { if (keys.indexOf(k) < 0 && (typeof o[k] !== 'object' || o[k] instanceof Number)) keys.push(k); }); });
    var head = el('tr', {}, keys.map(function (k) { return el('th', { text: k.replace(/_/g, ' ') }); }));
    var body = el('tbody', {}, list.map(function (o) {
      return el('tr', {}, keys.map(function (k) {
        var v = o[k];
        return el('td', typeof v === 'number' || v instanceof Number ? { cls: 'num', text: whole(v), title: /bytes|retained|in_use/.test(k) ? size(v) : '' } : { text: v === undefined || v === null ? '' : String(v) });
      }));
    }));
    kids.push(el('table', { id: 'gmg-owners' }, [el('thead', {}, [head]), body]));
    app.appendChild(card('By owner', kids));
  }

  /* ---- fragmentation ---- */
  function hex(s) { return String(s); }
  /* where a merged map's blocks part: at every gap, or at the biggest */
  function splits(f) {
    var n = 0;
    for (var i = 1; i < f.map.length; i++) if (f.map[i][0] > f.map[i - 1][0] + f.map[i - 1][1]) n++;
    if (!f.gaps) return ' (the allocations lie side by side: no gap)';
    return n >= f.gaps ? ', split at every gap (' + n + ')' : ', split at the ' + plural(n, 'largest gap') + ' of ' + f.gaps;
  }
  function fragmentation() {
    var list = R.fragmentation || [];
    var kids = [];
    if (!Array.isArray(R.fragmentation)) kids.push(empty('This report carries no fragmentation section.'));
    else if (!list.length) kids.push(empty('No device: nothing to map.'));
    list.forEach(function (f) {
      kids.push(el('h3', { text: 'Device ' + f.device }));
      if (!f.live_allocations) { kids.push(empty('No live device allocation: the address span is empty.')); return; }
      var nums = el('div', { cls: 'fragnums', id: 'gmg-frag-' + f.device });
      function n(k, v) { nums.appendChild(el('span', {}, [el('b', { text: k + ': ' }), v])); }
      n('span', hex(f.span_start) + ' \u2013 ' + hex(f.span_end) + ', ' + size(f.span_bytes));
      n('allocations', f.live_allocations + ', ' + size(f.granted_bytes) + ' granted');
      n('gaps', f.gaps + ', ' + size(f.gap_bytes) + ', largest ' + size(f.largest_gap));
      n('utilisation', (100 * f.span_utilisation).toFixed(1) + '%');
      n('rounding waste', size(f.rounding_waste));
      if (f.device_free !== null && f.device_free !== undefined) n('device free', size(f.device_free) + ' of ' + size(f.device_total) + (f.device_free_from === 'nvml' ? ' (NVML)' : ''));
      kids.push(nums);
      if (!Array.isArray(f.map)) { kids.push(empty('This report carries no address map.')); return; }
      var W = 1000, H = 44, span = f.span_bytes || 1;
      var s = svg('svg', { viewBox: '0 0 ' + W + ' ' + (H + 16), role: 'img', 'class': 'fragmap' });
      s.appendChild(svgTitle(svg('rect', { x: 0, y: 0, width: W, height: H, fill: '#eef0f4', stroke: '#c9ced8' }), 'gaps: ' + size(f.gap_bytes)));
      f.map.forEach(function (b) {
        var x = W * b[0] / span, w = Math.max(W * b[1] / span, 0.6);
        var full = b[1] ? Math.min(1, b[3] / b[1]) : 1;
        var r = svg('rect', { x: x.toFixed(2), y: 2, width: w.toFixed(2), height: H - 4, fill: full > 0.999 ? '#2f6fd0' : 'hsl(215,62%,' + (70 - 24 * full).toFixed(0) + '%)', 'class': 'block' });
        svgTitle(r, 'offset ' + b[0] + ': ' + size(b[1]) + ', ' + plural(b[2], 'allocation') + (b[2] > 1 ? ', ' + size(b[3]) + ' of it allocated' : ''));
        s.appendChild(r);
      });
      s.appendChild(svg('text', { x: 0, y: H + 13 }, hex(f.span_start)));
      s.appendChild(svg('text', { x: W, y: H + 13, 'text-anchor': 'end' }, hex(f.span_end)));
      kids.push(s);
      kids.push(el('p', { cls: 'note', text: 'The address span drawn to scale: blue is allocated, grey is a gap. ' +
        (f.map_merged ? 'This device has more live allocations than the map keeps one by one: neighbours are merged into blocks (lighter where a block holds gaps too)' + splits(f) + '.' : 'Each block is one allocation; hover for its size.') }));
    });
    app.appendChild(card('Fragmentation: the address span of live allocations', kids));
  }

  try {
    header();
    timelines();
    flames();
    table();
    owners();
    fragmentation();
    toDraw.forEach(function (f) { f.draw(); });
    document.documentElement.setAttribute('data-gmg-ready', '1');
    /* how long reading and drawing took, in ms (the benchmark reads it) */
    if (window.performance) document.documentElement.setAttribute('data-gmg-ms', String(Math.round(performance.now() - t0)));
  } catch (e) {
    app.appendChild(el('p', { cls: 'error', id: 'gmg-error', text: 'The page failed to draw this report: ' + e }));
    throw e;
  }
})();
