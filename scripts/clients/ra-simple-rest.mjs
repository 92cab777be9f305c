// react-admin's simple-rest data provider (ra-data-simple-rest, unchanged,
// with ra-core's default fetchJson) against a running widgets-todos:
//
//   API_URL=http://127.0.0.1:8080/api node target/clients/ra-simple-rest.mjs
//
// Run by scripts/clients.sh (see ra-json-server.mjs). The provider speaks
// its own dialect: sort=["title","ASC"], range=[0,9], filter={...}, with a
// `Range: todos=0-9` header, and reads the total from Content-Range. Calls
// every data-provider operation on /api/todos and checks the results, then
// the errors a user meets, as react-admin shows them (react-admin.mjs).
// Prints one line per operation and "ra-simple-rest: N passed, M failed".
import simpleRestProvider from 'ra-data-simple-rest';

import { API_URL, SEED, check, finish, json, operation, same, seeded, watchFetch, withTimeout } from './lib.mjs';
import { errorCases, notifies } from './react-admin.mjs';

watchFetch();
const dataProvider = simpleRestProvider(API_URL);
const call = (method, resource, params) => withTimeout(dataProvider[method](resource, params));

const page = (p, perPage) => ({ page: p, perPage });
const ids = records => records.map(r => r.id);
let todos = []; // what the server should hold
let id = []; // id[i]: the id of SEED[i]

await operation('create: 6 todos, one without "completed"', async () => {
    for (const data of SEED) {
        const { data: record } = await call('create', 'todos', { data });
        check(Number.isInteger(record.id) && record.id > 0, `no positive integer id in ${json(record)}`);
        id.push(record.id);
    }
    todos = seeded(id);
    const { data } = await call('getMany', 'todos', { ids: id });
    same(data, todos, 'the todos stored');
    return `ids ${id.join(', ')}`;
});

await operation('getList: the first page, by id (sort, range, filter={}, Range: todos=0-9)', async () => {
    const { data, total } = await call('getList', 'todos', {
        pagination: page(1, 10),
        sort: { field: 'id', order: 'ASC' },
        filter: {},
    });
    same(total, 6, 'total (from Content-Range)');
    same(data, todos, 'records');
    return `total ${total}`;
});

await operation('getList: sort title DESC, page 2 of 4 a page', async () => {
    const { data, total } = await call('getList', 'todos', {
        pagination: page(2, 4),
        sort: { field: 'title', order: 'DESC' },
        filter: {},
    });
    // Walk the dog, Pay rent, Call mom, Buy milk | Buy bread, Answer mail
    same(total, 6, 'total (all matches, not the page)');
    same(ids(data), [id[3], id[5]], 'ids');
    return `total ${total}, ids ${ids(data).join(', ')}`;
});

await operation('getList: filter {completed: true}', async () => {
    const { data, total } = await call('getList', 'todos', {
        pagination: page(1, 10),
        sort: { field: 'id', order: 'ASC' },
        filter: { completed: true },
    });
    same(total, 2, 'total');
    same(data, [todos[1], todos[3]], 'records');
    return `total ${total}`;
});

await operation('getList: filter {q: "BUY"} (any text field, any case), sort title ASC', async () => {
    const { data, total } = await call('getList', 'todos', {
        pagination: page(1, 10),
        sort: { field: 'title', order: 'ASC' },
        filter: { q: 'BUY' },
    });
    same(total, 2, 'total');
    same(data, [todos[3], todos[0]], 'records');
    return `total ${total}`;
});

await operation('getList: filter {userId: [2, 3], title_like: "r"}, sort userId DESC', async () => {
    const { data, total } = await call('getList', 'todos', {
        pagination: page(1, 10),
        sort: { field: 'userId', order: 'DESC' },
        filter: { userId: [2, 3], title_like: 'r' },
    });
    // Buy bread (2), Pay rent (3): by userId descending.
    same(total, 2, 'total');
    same(data, [todos[4], todos[3]], 'records');
    return `total ${total}`;
});

await operation('getList: a page past the end is empty, with the total', async () => {
    const { data, total } = await call('getList', 'todos', {
        pagination: page(3, 5),
        sort: { field: 'id', order: 'ASC' },
        filter: {},
    });
    same(data, [], 'records');
    same(total, 6, 'total (Content-Range: todos */6)');
    return `total ${total}`;
});

await operation('getOne', async () => {
    const { data } = await call('getOne', 'todos', { id: id[2] });
    same(data, todos[2], 'record');
    return `id ${data.id}`;
});

await operation('getMany: 3 ids, one repeated (filter={"id":[...]})', async () => {
    const { data } = await call('getMany', 'todos', { ids: [id[4], id[0], id[2], id[0]] });
    same([...data].sort((a, b) => a.id - b.id), [todos[0], todos[2], todos[4]], 'records (any order)');
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
    same((await call('getOne', 'todos', { id: previousData.id })).data, changed, 'stored record');
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
    const result = await call('delete', 'todos', { id: previousData.id, previousData });
    same(result.data, previousData, 'returned record');
    const { data } = await call('getMany', 'todos', { ids: [previousData.id] });
    same(data, [], 'getMany of the deleted id');
    return `id ${result.data.id}`;
});

await operation('deleteMany: 2 ids (a DELETE each)', async () => {
    const targets = [id[0], id[1]];
    const result = await call('deleteMany', 'todos', { ids: targets });
    same(result.data, targets, 'returned ids');
    const { data, total } = await call('getList', 'todos', {
        pagination: page(1, 10),
        sort: { field: 'id', order: 'ASC' },
        filter: {},
    });
    same(ids(data), [id[2], id[3], id[4]], 'ids left in the store');
    same(total, 3, 'total left');
    return `ids ${result.data.join(', ')}`;
});

await operation('getOne with meta.embed: the notification says there are no relations', async () => {
    const error = await withTimeout(
        dataProvider.getOne('todos', { id: id[2], meta: { embed: ['user'] } }).then(
            () => null,
            e => e
        )
    );
    return notifies(
        error,
        400,
        "bad query parameter 'embed': widgets and todos have no relations, so there is nothing to embed or " +
            'expand; remove embed: each item is served as it is stored'
    );
});

await errorCases(operation, {
    provider: dataProvider,
    make: httpClient => simpleRestProvider(API_URL, httpClient),
    todo: todos[2],
    missing: id[id.length - 1] + 1000,
    badList: { pagination: page(1, 10), sort: { field: 'id', order: 'ASC' }, filter: { nope: 1 } },
    badListMessage:
        "bad query parameter 'filter': 'nope' is not a filter; fields: id, userId, title, completed; " +
        'name a field, a field with _ne, _gte, _lte or _like, or q',
});

finish('ra-simple-rest');
