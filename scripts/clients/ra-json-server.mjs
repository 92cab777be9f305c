// react-admin's json-server data provider (ra-data-json-server, unchanged,
// with ra-core's default fetchJson) against a running widgets-todos:
//
//   API_URL=http://127.0.0.1:8080/api node target/clients/ra-json-server.mjs
//
// Run by scripts/clients.sh, which installs the pinned packages under
// target/clients, copies this file there (so that the bare imports
// resolve as in any app) and starts a fresh, empty server. Calls every
// data-provider operation on /api/todos, the getList variants a react-admin
// list sends (pagination, sort, a filter, `q`), and checks the results: ids,
// totals, order, the records; then the errors a user meets, as react-admin
// shows them (react-admin.mjs). Prints one line per operation and a closing
// "ra-json-server: N passed, M failed"; exits 1 if any failed.
import jsonServerProvider from 'ra-data-json-server';

import { API_URL, SEED as seed, check, finish, json, operation, same, watchFetch, withTimeout } from './lib.mjs';
import { errorCases } from './react-admin.mjs';

// Watches what the provider sends, to say so when a check fails. The
// provider and fetchJson are not changed: this only records and passes on.
watchFetch();

const dataProvider = jsonServerProvider(API_URL);

// The provider's call, and each call a check makes to read the store back.
const call = (method, resource, params) => withTimeout(dataProvider[method](resource, params));

const page = (p, perPage) => ({ page: p, perPage });
const ids = records => records.map(r => r.id);

// The store starts empty: create is first, and every later check knows
// exactly what the store holds.
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

await operation('fetch(url, {method: "DELETE"}).then(r => r.json()), as json-server users write it', async () => {
    const { data: record } = await call('create', 'todos', { data: { userId: 9, title: 'Plain fetch' } });
    const deleted = await withTimeout(fetch(`${API_URL}/todos/${record.id}`, { method: 'DELETE' }).then(r => r.json()));
    same(deleted, { id: record.id, userId: 9, title: 'Plain fetch', completed: false }, 'the todo deleted');
    return `id ${deleted.id}`;
});

await errorCases(operation, {
    provider: dataProvider,
    make: httpClient => jsonServerProvider(API_URL, httpClient),
    todo: todos[2],
    missing: id[id.length - 1] + 1000,
    badList: { pagination: page(1, 10), sort: { field: 'id', order: 'ASC' }, filter: { nope: 1 } },
    badListMessage:
        "unknown query parameter 'nope'; valid parameters: id, userId, title, completed (each also with _ne, " +
        '_gte, _lte, or _like for text), q, _sort, _order, _page, _limit, _start, _end, sort, range, filter, ' +
        "_delay, _; check the parameter's spelling against the list",
});

finish('ra-json-server');
