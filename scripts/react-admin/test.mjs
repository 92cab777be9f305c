// react-admin's json-server data provider (ra-data-json-server, unchanged,
// with ra-core's default fetchJson) against a running widgets-todos:
//
//   API_URL=http://127.0.0.1:8080/api node target/react-admin/test.mjs
//
// Run by scripts/react-admin.sh, which installs the pinned packages under
// target/react-admin, copies this file there (so that the bare import below
// resolves as in any app) and starts a fresh, empty server. Calls every
// data-provider operation on /api/todos, the getList variants a react-admin
// list sends (pagination, sort, a filter, `q`), and checks the results: ids,
// totals, order, the records. Prints one line per operation and a closing
// "react-admin: N passed, M failed"; exits 1 if any failed. Every call has a
// time limit, and so has the whole run.
import jsonServerProvider from 'ra-data-json-server';

const API_URL = process.env.API_URL;
if (!API_URL || !/^http:\/\/127\.0\.0\.1:\d+\/api$/.test(API_URL)) {
    console.error('set API_URL to http://127.0.0.1:PORT/api');
    process.exit(2);
}
const CALL_TIMEOUT_MS = 10_000;
setTimeout(() => {
    console.log('FAIL: the whole run took more than 60 s');
    process.exit(1);
}, 60_000).unref();

// Watches what the provider sends, to say so when a check fails. The
// provider and fetchJson are not changed: this only records and passes on.
let sent = [];
const realFetch = globalThis.fetch;
globalThis.fetch = (url, options = {}) => {
    const call = `${options.method || 'GET'} ${String(url).slice(API_URL.length - 4)}`;
    sent.push(call);
    return realFetch(url, options).then(response => {
        sent[sent.indexOf(call)] = `${call} -> ${response.status}`;
        return response;
    });
};

const dataProvider = jsonServerProvider(API_URL);

let passed = 0;
let failed = 0;
let n = 0;

class CheckError extends Error {}
function check(condition, message) {
    if (!condition) throw new CheckError(message);
}
const json = value => JSON.stringify(value);
function same(actual, expected, what) {
    check(json(actual) === json(expected), `${what}: expected ${json(expected)}, got ${json(actual)}`);
}

function withTimeout(promise) {
    let timer;
    const limit = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CALL_TIMEOUT_MS} ms`)), CALL_TIMEOUT_MS);
    });
    return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}
// The provider's call, and each call a check makes to read the store back.
const call = (method, resource, params) => withTimeout(dataProvider[method](resource, params));

async function operation(name, body) {
    n += 1;
    sent = [];
    try {
        const detail = await body();
        passed += 1;
        console.log(`ok ${n} - ${name}${detail ? `: ${detail}` : ''}`);
    } catch (e) {
        failed += 1;
        let why;
        if (e instanceof CheckError) why = e.message;
        else if (e && e.status) why = `HttpError ${e.status} ${json(e.body ?? e.message)}`;
        else why = `${e && e.name}: ${e && e.message}`;
        console.log(`FAIL ${n} - ${name}: ${why}`);
        if (sent.length) console.log(`    sent: ${sent.join('; ')}`);
    }
}

const page = (p, perPage) => ({ page: p, perPage });
const ids = records => records.map(r => r.id);

// The store starts empty: create is first, and every later check knows
// exactly what the store holds.
const seed = [
    { userId: 1, title: 'Buy milk', completed: false },
    { userId: 1, title: 'Walk the dog', completed: true },
    { userId: 2, title: 'Call mom' }, // completed left out: false
    { userId: 2, title: 'Buy bread', completed: true },
    { userId: 3, title: 'Pay rent', completed: false },
    { userId: 1, title: 'Answer mail', completed: false },
];
const todos = []; // what the server should hold, by index of creation
const byTitle = title => todos.find(t => t.title === title);
let id = []; // id[i]: the id of seed[i]

await operation('create: 6 todos, one without "completed"', async () => {
    for (const data of seed) {
        const { data: record } = await call('create', 'todos', { data });
        check(Number.isInteger(record.id) && record.id > 0, `no positive integer id in ${json(record)}`);
        same(record, { ...data, id: record.id, completed: data.completed ?? false }, `created ${data.title}`);
        todos.push({ id: record.id, userId: data.userId, title: data.title, completed: data.completed ?? false });
    }
    id = todos.map(t => t.id);
    check(id.every((v, i) => i === 0 || v > id[i - 1]), `ids not increasing: ${json(id)}`);
    return `ids ${id.join(', ')}`;
});

await operation('getList: pagination only (_start, _end)', async () => {
    const { data, total } = await call('getList', 'todos', { pagination: page(1, 10), filter: {} });
    same(total, 6, 'total');
    same(data, todos, 'records in id order');
    return `total ${total}`;
});

await operation('getList: sort title ASC', async () => {
    const { data, total } = await call('getList', 'todos', {
        pagination: page(1, 10),
        sort: { field: 'title', order: 'ASC' },
        filter: {},
    });
    same(total, 6, 'total');
    same(
        data.map(t => t.title),
        ['Answer mail', 'Buy bread', 'Buy milk', 'Call mom', 'Pay rent', 'Walk the dog'],
        'titles'
    );
    same(data, data.map(t => byTitle(t.title)), 'records');
    return `total ${total}`;
});

await operation('getList: sort id DESC, page 2 (2 a page)', async () => {
    const { data, total } = await call('getList', 'todos', {
        pagination: page(2, 2),
        sort: { field: 'id', order: 'DESC' },
        filter: {},
    });
    same(total, 6, 'total (all matches, not the page)');
    same(ids(data), [id[3], id[2]], 'ids');
    return `total ${total}, ids ${ids(data).join(', ')}`;
});

await operation('getList: filter completed=true, sort id ASC', async () => {
    const { data, total } = await call('getList', 'todos', {
        pagination: page(1, 10),
        sort: { field: 'id', order: 'ASC' },
        filter: { completed: true },
    });
    same(total, 2, 'total');
    same(data, [todos[1], todos[3]], 'records');
    return `total ${total}`;
});

await operation('getList: q=buy (any text field, any case), sort title ASC', async () => {
    const { data, total } = await call('getList', 'todos', {
        pagination: page(1, 10),
        sort: { field: 'title', order: 'ASC' },
        filter: { q: 'buy' },
    });
    same(total, 2, 'total');
    same(data, [todos[3], todos[0]], 'records');
    return `total ${total}`;
});

await operation('getList: filter userId=1 and q=a, sort title DESC (2 a page)', async () => {
    const { data, total } = await call('getList', 'todos', {
        pagination: page(1, 2),
        sort: { field: 'title', order: 'DESC' },
        filter: { userId: 1, q: 'a' },
    });
    // userId 1 and "a" in the title: Walk the dog, Answer mail ("Buy milk" has no a).
    same(total, 2, 'total');
    same(data, [todos[1], todos[5]], 'records');
    return `total ${total}`;
});

await operation('getOne', async () => {
    const { data } = await call('getOne', 'todos', { id: id[2] });
    same(data, todos[2], 'record');
    return `id ${data.id}`;
});

await operation('getOne: an id never created rejects with HttpError 404', async () => {
    const missing = id[id.length - 1] + 1000;
    const outcome = await call('getOne', 'todos', { id: missing }).then(
        ({ data }) => `resolved with ${json(data)}`,
        e => e
    );
    check(outcome && outcome.name === 'HttpError', `expected an HttpError, got ${outcome}`);
    same(outcome.status, 404, 'status');
    same(outcome.body && outcome.body.status, 404, "the body's status");
    return `${outcome.status}, message ${json(outcome.message)}`;
});

await operation('getMany: 3 ids, one repeated', async () => {
    const { data } = await call('getMany', 'todos', { ids: [id[4], id[0], id[2], id[0]] });
    const sorted = [...data].sort((a, b) => a.id - b.id);
    same(sorted, [todos[0], todos[2], todos[4]], 'records (any order)');
    return `ids ${ids(data).join(', ')}`;
});

await operation('getManyReference: userId=1, filter completed=false, sort title DESC', async () => {
    const { data, total } = await call('getManyReference', 'todos', {
        target: 'userId',
        id: 1,
        pagination: page(1, 10),
        sort: { field: 'title', order: 'DESC' },
        filter: { completed: false },
    });
    same(total, 2, 'total');
    same(data, [todos[0], todos[5]], 'records');
    return `total ${total}`;
});

await operation('update: the whole record back, changed (PUT)', async () => {
    const previousData = todos[2];
    const changed = { ...previousData, title: 'Call dad', completed: true };
    const { data } = await call('update', 'todos', { id: previousData.id, data: changed, previousData });
    same(data, changed, 'returned record');
    const { data: stored } = await call('getOne', 'todos', { id: previousData.id });
    same(stored, changed, 'stored record');
    todos[2] = changed;
    return `id ${data.id}`;
});

await operation('updateMany: {completed: true} on 2 ids (a PUT each, other fields kept)', async () => {
    const targets = [id[0], id[4]];
    const { data } = await call('updateMany', 'todos', { ids: targets, data: { completed: true } });
    same(data, targets, 'returned ids');
    todos[0] = { ...todos[0], completed: true };
    todos[4] = { ...todos[4], completed: true };
    const { data: stored } = await call('getMany', 'todos', { ids: targets });
    same([...stored].sort((a, b) => a.id - b.id), [todos[0], todos[4]], 'stored records');
    return `ids ${data.join(', ')}`;
});

await operation('delete: returns the deleted record', async () => {
    const previousData = todos[5];
    let result;
    try {
        result = await call('delete', 'todos', { id: previousData.id, previousData });
    } finally {
        // Whatever the answer said, the item must be gone.
        const gone = await call('getOne', 'todos', { id: previousData.id }).then(
            () => 'still there',
            e => (e.status === 404 ? 'gone' : `getOne: ${e.status || e.message}`)
        );
        check(gone === 'gone', `after delete, the item is ${gone}`);
    }
    same(result.data, previousData, 'returned record');
    return `id ${result.data.id}`;
});

await operation('deleteMany: 2 ids (a DELETE each)', async () => {
    const targets = [id[0], id[1]];
    let result;
    try {
        result = await call('deleteMany', 'todos', { ids: targets });
    } finally {
        const { data, total } = await call('getList', 'todos', { pagination: page(1, 10), filter: {} });
        same(ids(data), [id[2], id[3], id[4]], 'ids left in the store');
        same(total, 3, 'total left');
    }
    same(result.data, targets, 'returned ids');
    return `ids ${result.data.join(', ')}`;
});

console.log(`react-admin: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
