const D = require('better-sqlite3'); const db = new D(process.argv[2], { readonly: true });
const fs = require('fs'); try { fs.unlinkSync('/tmp/ps200/vac.sqlite3'); } catch {}
const s = performance.now(); db.exec(`vacuum into '/tmp/ps200/vac.sqlite3'`); console.log('vacuum into', (performance.now() - s).toFixed(0), 'ms');
