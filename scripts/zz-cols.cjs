const D = require('better-sqlite3'); const db = new D(process.argv[2], { readonly: true });
console.log(db.prepare(`select avg(length(uuid)) uuid, avg(length(event)) event, avg(length(distinct_id)) did, avg(length(properties)) props, avg(length(timestamp)) ts, avg(length(created_at)) ca, avg(length(elements_chain)) ec from events`).get());
console.log(db.prepare(`select json(properties) p from events where property_set_id is not null limit 3 offset 1000`).all());
const keys = db.prepare(`select e.key, count(*) n, avg(length(cast(e.value as text))) l from events, json_each(events.properties) e group by e.key order by n * (length(e.key) + l) desc limit 12`).all(); console.log(keys);
