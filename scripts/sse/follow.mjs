// eventsource 4.x (Node's most used EventSource), unchanged, following
// the change feed through two cuts, as scripts/sse.sh runs it:
//
//   SERVER_URL=http://127.0.0.1:PORT node follow.mjs
//
// The client connects through a relay of this script's own, which cuts
// every connection on demand, as a network would. The first cut comes
// before any event, when only the stream's opening position tells the
// client where it stands; the second after some. Writes are made while
// the client waits to reconnect (the stream's `retry:`, 1 s). The client
// must resume each time with `Last-Event-ID` and see every write once, in
// order, with no `resync`. Prints "ok"/"FAIL" lines, then
// "eventsource: N passed, M failed".
import net from 'node:net';
import { EventSource } from 'eventsource';

const server = new URL(process.env.SERVER_URL);
let passed = 0;
let failed = 0;
const check = (ok, what) => {
    console.log(`${ok ? 'ok' : 'FAIL'} - ${what}`);
    if (ok) passed++; else failed++;
};

// The relay: each connection to it is piped to the server; `cut` ends
// them all. It notes the Last-Event-ID each request carries.
const open = new Set();
const resumedFrom = [];
const relay = net.createServer((client) => {
    const upstream = net.connect(Number(server.port), server.hostname);
    open.add(client);
    open.add(upstream);
    client.once('data', (head) => {
        const id = /\r\nLast-Event-ID: *([^\r]*)\r\n/i.exec(head.toString('latin1'));
        resumedFrom.push(id ? id[1] : null);
    });
    client.pipe(upstream).pipe(client);
    for (const socket of [client, upstream]) {
        socket.on('error', () => {});
        socket.on('close', () => { open.delete(socket); client.destroy(); upstream.destroy(); });
    }
});
const cut = () => { for (const socket of open) socket.destroy(); };
await new Promise((resolve) => relay.listen(0, '127.0.0.1', resolve));
const feed = `http://127.0.0.1:${relay.address().port}/api/events`;

const created = [];
const seen = [];
let position = null;
let lastId = null;
let resyncs = 0;
const source = new EventSource(feed);
source.addEventListener('position', (event) => { position = event.lastEventId; });
source.addEventListener('resync', () => { resyncs++; });
source.addEventListener('created', (event) => {
    seen.push(JSON.parse(event.data).id);
    lastId = event.lastEventId;
});

const until = async (what, ok, seconds = 10) => {
    const deadline = Date.now() + seconds * 1000;
    while (!ok() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    check(ok(), what);
};
const write = async (n) => {
    for (let i = 0; i < n; i++) {
        const response = await fetch(new URL('/api/todos', server), {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ userId: 1, title: `eventsource ${created.length + 1}` }),
        });
        created.push((await response.json()).id);
    }
};

await until('the stream opens with its position', () => position !== null);
cut();
await write(5);
await until('after a cut before any event, the writes made meanwhile come', () => seen.length >= 5);
check(resumedFrom[1] === position, `it resumed from the opening position (Last-Event-ID: ${resumedFrom[1]})`);
await write(5);
await until('live writes come', () => seen.length >= 10);
const last = lastId;
cut();
await write(5);
await until('after a cut between events, the writes made meanwhile come', () => seen.length >= 15);
check(resumedFrom[2] === last, `it resumed from the last event (Last-Event-ID: ${resumedFrom[2]})`);
check(JSON.stringify(seen) === JSON.stringify(created), 'every write once, in order');
check(resyncs === 0, 'no resync');
source.close();
relay.close();
cut();
console.log(`eventsource: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
