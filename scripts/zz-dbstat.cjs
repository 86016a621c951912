const D = require('better-sqlite3'); const db = new D(process.argv[2], { readonly: true });
const n = db.prepare('select count(*) n from events').get().n;
const rows = db.prepare('select name, sum(pgsize) as bytes from dbstat group by name having bytes > 0 order by bytes desc').all();
let total = 0; for (const r of rows) total += r.bytes;
console.log(n, 'events; total', (total / n).toFixed(0), 'bytes an event');
for (const r of rows.slice(0, 12)) console.log(r.name.padEnd(40), (r.bytes / n).toFixed(1));
for (const t of ['property_sets', 'property_key_orders', 'element_groups']) console.log(t, db.prepare(`select count(*) n from ${t}`).get().n);
