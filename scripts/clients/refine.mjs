// Refine's simple-rest data provider (@refinedev/simple-rest, unchanged,
// with its own axios instance) against a running widgets-todos:
//
//   API_URL=http://127.0.0.1:8080/api node target/clients/refine.mjs
//
// Run by scripts/clients.sh (see ra-json-server.mjs). Calls every method
// of the provider, every filter operator it maps to a parameter of its own
// (eq, ne, gte, lte, contains, in, and the field `q`), one- and two-field
// sorts and each pagination mode, and checks the data; then the errors a
// user meets, as Refine shows them: its notifications put the provider's
// HttpError message (the body's `message`) under their title, and its
// forms take field errors from the HttpError's `errors`. Prints one line
// per operation and "refine: N passed, M failed".
//
// Refine maps the operators it has no parameter for (lt, gt, startswith,
// ...) to plain equality itself, before the server sees them: that is
// the provider's, and is checked here only as what it sends.
import dataProvider, { axiosInstance } from '@refinedev/simple-rest';
import axios from 'axios';

import { API_URL, MESSAGES, SEED, STALE_TAG, check, failure, finish, json, operation, record, same, seeded, withTimeout } from './lib.mjs';

// Watches what the provider sends, passing everything on unchanged.
const watch = instance => {
    instance.interceptors.request.use(config => {
        const done = record(`${config.method.toUpperCase()} ${String(config.url).slice(API_URL.length - 4)}`);
        config.done = done;
        return config;
    });
    instance.interceptors.response.use(
        response => {
            response.config.done?.(response.status);
            return response;
        },
        error => {
            error.config?.done?.(error.response?.status);
            return Promise.reject(error);
        }
    );
};
watch(axiosInstance);
const provider = dataProvider(API_URL);
const call = (method, params) => withTimeout(provider[method](params));
const resource = 'todos';

let todos = [];
let id = [];

await operation('create: 6 todos, one without "completed"', async () => {
    for (const variables of SEED) {
        const { data } = await call('create', { resource, variables });
        check(Number.isInteger(data.id) && data.id > 0, `no positive integer id in ${json(data)}`);
        id.push(data.id);
    }
    todos = seeded(id);
    return `ids ${id.join(', ')}`;
});

/** getList with these filters (and sort), checked against `expected`. */
async function list(filters, expected, sorters = [{ field: 'id', order: 'asc' }]) {
    const { data, total } = await call('getList', {
        resource,
        pagination: { currentPage: 1, pageSize: 10 },
        filters,
        sorters,
    });
    same(data, expected, 'records');
    same(total, expected.length, 'total');
    return `total ${total}`;
}

await operation('getList: pages (_start, _end) and the total from X-Total-Count', async () => {
    const { data, total } = await call('getList', { resource, pagination: { currentPage: 2, pageSize: 4 } });
    same(data, todos.slice(4), 'page 2 of 4 a page');
    same(total, 6, 'total');
    const all = await call('getList', { resource, pagination: { mode: 'off' } });
    same(all.data, todos, 'pagination off: every todo');
    const client = await call('getList', { resource, pagination: { mode: 'client' } });
    same(client.data, todos, 'pagination on the client: every todo');
    return `total ${total}`;
});

await operation('getList: sort by one field, and by two (_sort=a,b&_order=asc,desc)', async () => {
    const { data } = await call('getList', { resource, sorters: [{ field: 'title', order: 'desc' }] });
    same(data.map(t => t.title), ['Walk the dog', 'Pay rent', 'Call mom', 'Buy milk', 'Buy bread', 'Answer mail'], 'titles');
    const two = await call('getList', {
        resource,
        sorters: [
            { field: 'userId', order: 'asc' },
            { field: 'title', order: 'desc' },
        ],
    });
    same(two.data, [todos[1], todos[0], todos[5], todos[2], todos[3], todos[4]], 'by userId, then title descending');
});

const filterCases = [
    ['eq: userId = 1', [{ field: 'userId', operator: 'eq', value: 1 }], [0, 1, 5]],
    ['eq: completed = true', [{ field: 'completed', operator: 'eq', value: true }], [1, 3]],
    ['ne: userId_ne', [{ field: 'userId', operator: 'ne', value: 1 }], [2, 3, 4]],
    ['gte: userId_gte', [{ field: 'userId', operator: 'gte', value: 2 }], [2, 3, 4]],
    ['lte: title_lte', [{ field: 'title', operator: 'lte', value: 'Buy milk' }], [0, 3, 5]],
    ['contains: title_like, any case', [{ field: 'title', operator: 'contains', value: 'BUY' }], [0, 3]],
    ['in: id=..&id=..', [{ field: 'id', operator: 'in', value: [1, 3, 5] }], [0, 2, 4]],
    ['q: any text field', [{ field: 'q', operator: 'contains', value: 'mail' }], [5]],
    [
        'several at once: all must hold',
        [
            { field: 'userId', operator: 'in', value: [1, 2] },
            { field: 'completed', operator: 'eq', value: false },
            { field: 'title', operator: 'contains', value: 'a' },
        ],
        [2, 5],
    ],
    // Refine's own mapping: lt becomes plain equality before it is sent.
    ['lt, as the provider sends it: userId=2 (its equality)', [{ field: 'userId', operator: 'lt', value: 2 }], [2, 3]],
];
for (const [name, filters, expected] of filterCases) {
    await operation(`getList: filter ${name}`, () => list(filters, expected.map(i => todos[i])));
}

await operation('getList: "or" is refused by the provider itself, sending nothing', async () => {
    const error = await failure(
        call('getList', { resource, filters: [{ operator: 'or', value: [] }] }),
        'getList with or'
    );
    check(/not supported/.test(error.message), error.message);
});

await operation('getOne', async () => {
    const { data } = await call('getOne', { resource, id: id[2] });
    same(data, todos[2], 'record');
});

await operation('getMany: 3 ids (id=..&id=..)', async () => {
    const { data } = await call('getMany', { resource, ids: [id[4], id[0], id[2]] });
    same(data, [todos[0], todos[2], todos[4]], 'records');
});

await operation('update: PATCH of the fields changed', async () => {
    const { data } = await call('update', { resource, id: id[2], variables: { title: 'Call dad', completed: true } });
    todos[2] = { ...todos[2], title: 'Call dad', completed: true };
    same(data, todos[2], 'returned record');
    same((await call('getOne', { resource, id: id[2] })).data, todos[2], 'stored record');
});

await operation('updateMany, as Refine core does it without the method: an update each', async () => {
    const targets = [0, 4];
    const results = await Promise.all(
        targets.map(i => call('update', { resource, id: id[i], variables: { completed: true } }))
    );
    for (const i of targets) todos[i] = { ...todos[i], completed: true };
    same(results.map(r => r.data), targets.map(i => todos[i]), 'returned records');
});

await operation('deleteOne: answers the record deleted (with variables as its body)', async () => {
    const { data } = await call('deleteOne', { resource, id: id[5], variables: { reason: 'done' } });
    same(data, todos[5], 'returned record');
    const error = await failure(call('getOne', { resource, id: id[5] }), 'getOne after delete');
    same(error.statusCode, 404, 'status after delete');
});

await operation('deleteMany, as Refine core does it without the method: a deleteOne each', async () => {
    const results = await Promise.all([0, 1].map(i => call('deleteOne', { resource, id: id[i] })));
    same(results.map(r => r.data), [todos[0], todos[1]], 'returned records');
    const { data } = await call('getList', { resource, pagination: { mode: 'off' } });
    same(data, [todos[2], todos[3], todos[4]], 'left');
    todos = [todos[2], todos[3], todos[4]];
});

await operation('custom: GET with filters, sorters and a query; POST; DELETE', async () => {
    const url = `${API_URL}/todos`;
    const { data } = await call('custom', {
        url,
        method: 'get',
        filters: [{ field: 'completed', operator: 'eq', value: true }],
        sorters: [{ field: 'title', order: 'asc' }],
        query: { _limit: 1 },
    });
    same(data, [todos[1]], 'GET');
    const created = await call('custom', { url, method: 'post', payload: { userId: 4, title: 'Custom' } });
    same(created.data, { id: created.data.id, userId: 4, title: 'Custom', completed: false }, 'POST');
    const deleted = await call('custom', { url: `${url}/${created.data.id}`, method: 'delete' });
    same(deleted.data, created.data, 'DELETE');
    same(provider.getApiUrl(), API_URL, 'getApiUrl');
});

/**
 * An HttpError as Refine shows it: a notification whose description is
 * the error's message, under "There was an error ... (status code: N)".
 */
function notifies(error, status, message) {
    same(error.statusCode, status, 'statusCode');
    same(error.message, message, 'the notification description (HttpError message)');
    return `${status}: ${JSON.stringify(error.message)}`;
}

const todo = todos[0];
await operation('400: contains on a number field', async () => {
    const error = await failure(
        call('getList', { resource, filters: [{ field: 'userId', operator: 'contains', value: '1' }] }),
        'getList'
    );
    return notifies(error, 400, "bad query parameter 'userId_like': _like applies to text fields only; userId is not text");
});
await operation('404: getOne of an id never created', async () => {
    const missing = id[id.length - 1] + 1000;
    return notifies(await failure(call('getOne', { resource, id: missing }), 'getOne'), 404, MESSAGES.missing(missing));
});
await operation('412: update with a stale If-Match (meta.headers)', async () => {
    const error = await failure(
        call('update', { resource, id: todo.id, variables: { title: 'x' }, meta: { headers: { 'If-Match': STALE_TAG } } }),
        'update'
    );
    const shown = notifies(error, 412, MESSAGES.stale(todo.id));
    same((await call('getOne', { resource, id: todo.id })).data, todo, 'the stored todo');
    return shown;
});
await operation('415: create sent as text/plain (meta.headers)', async () => {
    const error = await failure(
        call('create', { resource, variables: { userId: 1, title: 'x' }, meta: { headers: { 'Content-Type': 'text/plain' } } }),
        'create'
    );
    return notifies(error, 415, MESSAGES.unsupported);
});
await operation('422: create, the notification', async () => {
    const error = await failure(call('create', { resource, variables: { userId: 0 } }), 'create');
    return notifies(error, 422, MESSAGES.invalid);
});

await operation('422: field errors, with the interceptor that hands Refine the body\'s errors', async () => {
    // Refine's forms read HttpError.errors (ValidationErrors: a message by
    // field name); the provider's own interceptor copies only the message,
    // so an app passes an axios instance that also copies `errors`.
    const http = axios.create();
    http.interceptors.response.use(undefined, error =>
        Promise.reject({
            ...error,
            message: error.response?.data?.message,
            statusCode: error.response?.status,
            errors: error.response?.data?.errors,
        })
    );
    watch(http);
    const withErrors = dataProvider(API_URL, http);
    const variables = { userId: 0 };
    const error = await failure(withErrors.create({ resource, variables }), 'create');
    notifies(error, 422, MESSAGES.invalid);
    // Refine's useForm sets each member that names a field of the form and
    // holds a string on that field; `root` names none, and is skipped.
    const { root, ...fields } = error.errors;
    same(fields, MESSAGES.invalidFields, 'errors by field');
    same(root, { serverError: MESSAGES.invalid }, 'errors.root');
    const { data } = await withErrors.getList({ resource, pagination: { mode: 'off' } });
    same(data, todos, 'nothing created');
    return Object.keys(fields).join(', ');
});

finish('refine');
