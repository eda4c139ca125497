// Layout checks of a dpscope HTML report after Chromium laid it out, added to
// a copy of the page by tests/cli/compare_html_test.cpp (the reports carry no
// script). Writes {"problems": [...], "stats": {...}} into <pre id="dps-layout">,
// which the test reads from --dump-dom. Boxes are getBoundingClientRect().
(function () {
  const problems = [];
  const stats = { headings: 0, charts: 0, chart_rows: 0, bars: 0, tables: 0, changed_rows: 0, folded: 0, texts: 0 };
  const box = (e) => e.getBoundingClientRect();
  // Drawn: a box of some size, and not skipped (the contents of a closed
  // <details> still get boxes from getBoundingClientRect, but are not drawn).
  const visible = (e) => { const b = box(e); return b.width > 0 && b.height > 0 && e.checkVisibility(); };
  const what = (e) => e.tagName.toLowerCase() + ' "' + e.textContent.trim().replace(/\s+/g, ' ').slice(0, 50) + '"';
  const transparent = (e) => { const c = getComputedStyle(e).backgroundColor; return c === 'rgba(0, 0, 0, 0)' || c === 'transparent'; };

  // 1. No empty heading: something visible before the next heading of the same
  // or a higher level (the cluster comparison's "Charts" had nothing).
  for (const h of document.querySelectorAll('h1, h2, h3')) {
    stats.headings++;
    if (h.closest('summary')) continue;  // a folded section: its table is in the <details>
    const level = +h.tagName[1];
    let content = false;
    for (let n = h.nextElementSibling; n; n = n.nextElementSibling) {
      if (/^H[1-3]$/.test(n.tagName) && +n.tagName[1] <= level) break;
      if (n.tagName === 'DETAILS' && level <= 2) break;
      if (visible(n)) { content = true; break; }
    }
    if (!content) problems.push('empty heading: ' + what(h));
  }

  // 2. No two pieces of text overlap anywhere (labels, bar values, cells).
  const rects = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    if (!t.textContent.trim() || t.parentElement.closest('#dps-layout') || !t.parentElement.checkVisibility()) continue;
    const range = document.createRange();
    range.selectNodeContents(t);
    for (const r of range.getClientRects()) {
      if (r.width > 0 && r.height > 0) rects.push({ r, t });
    }
  }
  stats.texts = rects.length;
  rects.sort((a, b) => a.r.top - b.r.top);
  for (let i = 0; i < rects.length; i++) {
    for (let j = i + 1; j < rects.length && rects[j].r.top < rects[i].r.bottom; j++) {
      if (rects[i].t === rects[j].t) continue;
      const a = rects[i].r, b = rects[j].r;
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 1 && h > 1) {
        problems.push('text overlaps: "' + rects[i].t.textContent.trim().slice(0, 40) + '" and "' +
                      rects[j].t.textContent.trim().slice(0, 40) + '"');
      }
    }
  }

  // 3. Charts: a row per category with its label level with its own bars, a
  // bar per side, one track width per chart, every positive value visible
  // (>= 3 px) and bar lengths in the order of the values; rows whose values
  // differ are marked and look it.
  for (const fig of document.querySelectorAll('figure.chart')) {
    stats.charts++;
    const title = fig.querySelector('figcaption').textContent.slice(0, 50);
    const table = fig.querySelector('table.chart');
    if (!table) { problems.push('chart without its table: ' + title); continue; }
    const sides = table.rows[0].cells.length - 1 - (table.rows[0].textContent.includes('difference') ? 1 : 0);
    const bars = [];
    const tracks = new Set();
    let previous = null;
    for (const tr of Array.from(table.rows).slice(1)) {
      stats.chart_rows++;
      const label = tr.querySelector('th[scope=row]');
      const cells = tr.querySelectorAll('td.bar');
      if (!label) { problems.push(title + ': a row without a label'); continue; }
      if (cells.length !== sides) problems.push(title + ': ' + what(label) + ' has ' + cells.length + ' bars for ' + sides + ' sides');
      const lb = box(label);
      if (previous && lb.top < previous.bottom - 1) problems.push(title + ': label ' + what(label) + ' is not below the one before');
      previous = lb;
      const values = [];
      for (const td of cells) {
        const fill = td.querySelector('.fill'), track = td.querySelector('.track'), v = td.querySelector('.v');
        const fb = box(track), vb = box(v);
        tracks.add(Math.round(fb.width));
        const mid = (lb.top + lb.bottom) / 2;
        for (const [name, b] of [['bar', fb], ['value', vb]]) {
          if (mid < b.top - 2 || mid > b.bottom + 2 + (b.bottom - b.top)) {
            problems.push(title + ': ' + what(label) + ' is not level with its ' + name + ' (' + what(v) + ')');
          }
        }
        if (fill.dataset.value !== undefined) {
          const value = +fill.dataset.value, width = box(fill).width;
          values.push(value);
          bars.push({ value, width, label: label.textContent });
          stats.bars++;
          if (value > 0 && width < 3) problems.push(title + ': ' + label.textContent + ' = ' + value + ' is ' + width.toFixed(1) + ' px wide');
        }
      }
      const differ = new Set(values).size > 1;
      if (differ !== tr.classList.contains('changed')) {
        problems.push(title + ': ' + what(label) + (differ ? ' differs but is not marked' : ' is marked but does not differ'));
      }
      if (differ && transparent(label)) problems.push(title + ': the changed row ' + what(label) + ' does not look different');
    }
    if (tracks.size > 1) problems.push(title + ': bars on ' + tracks.size + ' different track widths');
    bars.sort((a, b) => a.value - b.value);
    for (let i = 1; i < bars.length; i++) {
      const a = bars[i - 1], b = bars[i];
      if (b.width + 0.5 < a.width || (a.value === b.value && Math.abs(a.width - b.width) > 0.5)) {
        problems.push(title + ': ' + b.label + ' = ' + b.value + ' is drawn ' + b.width.toFixed(1) + ' px, ' + a.label + ' = ' +
                      a.value + ' ' + a.width.toFixed(1) + ' px');
      }
    }
  }

  // 4. Tables of the sections: a difference column when there are several
  // sides, rows whose values differ marked (and looking it), and a section
  // that is 0 on every side folded (closed <details>, nothing drawn).
  for (const table of document.querySelectorAll('table:not(.chart)')) {
    const head = Array.from(table.rows[0].cells).map((c) => c.textContent);
    if (head[0] !== 'metric') continue;
    stats.tables++;
    const sides = head.length - 2 - (head.includes('difference') ? 1 : 0);
    if (sides > 1 && !head.includes('difference')) problems.push('a table without a difference column: ' + what(table.rows[1]));
    let zero = true;
    for (const tr of Array.from(table.rows).slice(1)) {
      const cells = Array.from(tr.cells).slice(1, 1 + sides);
      const texts = cells.map((c) => c.textContent);
      zero = zero && cells.every((c) => c.classList.contains('n') && c.textContent === '0');
      const numbers = cells.every((c) => c.classList.contains('n'));
      const differ = new Set(texts).size > 1;
      if (numbers && differ !== tr.classList.contains('changed')) {
        problems.push('table row ' + what(tr.cells[0]) + (differ ? ' differs but is not marked' : ' is marked but does not differ'));
      }
      if (tr.classList.contains('changed')) {
        stats.changed_rows++;
        if (transparent(tr.cells[1])) problems.push('the changed row ' + what(tr.cells[0]) + ' does not look different');
      }
    }
    const folded = table.closest('details.zero');
    if (folded) {
      stats.folded++;
      if (folded.open || visible(table)) problems.push('a folded section is shown: ' + what(folded.querySelector('summary')));
      if (!zero) problems.push('a section with a value other than 0 is folded: ' + what(folded.querySelector('summary')));
    } else if (zero && visible(table)) {
      problems.push('a section that is 0 on every side is not folded: ' + what(table.rows[1]));
    }
  }

  // 5. The page fits the window's width (wide charts scroll in their own box).
  if (document.documentElement.scrollWidth > window.innerWidth + 1) {
    problems.push('the page is ' + document.documentElement.scrollWidth + ' px wide in a ' + window.innerWidth + ' px window');
  }

  const out = document.createElement('pre');
  out.id = 'dps-layout';
  out.textContent = JSON.stringify({ problems, stats });
  document.body.appendChild(out);
})();
