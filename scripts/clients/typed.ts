// A client generated from the OpenAPI document the server serves: types by
// openapi-typescript (api.d.ts, made by scripts/clients.sh from
// /api/openapi.json), requests by openapi-fetch. This file must pass
// `tsc --strict` against those types, so a document that types a request
// the server takes as invalid (or an answer otherwise than the server
// sends it) fails here before anything runs; then every operation of the
// served document is called against a fresh, empty server and its answer
// checked, errors included (their `message`, and a 422's field errors).
// Prints one line per check and "typed: N passed, M failed".
import createClient from 'openapi-fetch';

import type { components, paths } from './api.js';

type Todo = components['schemas']['Todo'];
type Problem = components['schemas']['Problem'];

// Node's, without @types/node.
declare const process: { env: Record<string, string | undefined>; exit(code: number): never };

const API_URL = process.env.API_URL ?? '';
if (!/^http:\/\/127\.0\.0\.1:\d+\/api$/.test(API_URL)) {
    console.error('set API_URL to http://127.0.0.1:PORT/api');
    process.exit(2);
}
const BASE = API_URL.slice(0, -'/api'.length);
setTimeout(() => {
    console.log('FAIL: the whole run took more than 60 s');
    process.exit(1);
}, 60_000);

const client = createClient<paths>({ baseUrl: BASE });

class CheckError extends Error {}
function check(condition: boolean, message: string): asserts condition {
    if (!condition) throw new CheckError(message);
}
const json = (value: unknown): string => JSON.stringify(value);
function same(actual: unknown, expected: unknown, what: string): void {
    check(json(actual) === json(expected), `${what}: expected ${json(expected)}, got ${json(actual)}`);
}

// The generation and the type check, done by scripts/clients.sh, are
// checks too.
let passed = Number(process.env.TYPED_CHECKS ?? 0);
let failed = 0;
let n = passed;
/** Every operation called, as `METHOD /path/{id}`. */
const called = new Set<string>();

async function operation(name: string, body: () => Promise<string | void>): Promise<void> {
    n += 1;
    try {
        const detail = await body();
        passed += 1;
        console.log(`ok ${n} - ${name}${detail ? `: ${detail}` : ''}`);
    } catch (e) {
        failed += 1;
        const why = e instanceof Error ? e.message : String(e);
        console.log(`FAIL ${n} - ${name}: ${why}`);
    }
}

/** Checks a response's status, and counts its operation as called. */
function answered(op: string, response: Response, status: number): void {
    called.add(op);
    same(response.status, status, `${op}: status`);
}

/** Checks a problem document: its status and the `message` a client shows. */
function problem(error: Problem | undefined, status: number, message: string): Problem {
    check(error !== undefined, `expected a problem document with status ${status}`);
    same(error.status, status, 'the problem status');
    same(error.message, message, 'the problem message');
    check(error.detail.length > 0 && message.startsWith(error.detail), `detail ${json(error.detail)}`);
    return error;
}

await operation('GET, HEAD, OPTIONS /, /api, /healthz, /api/openapi.json', async () => {
    const home = await client.GET('/');
    answered('GET /', home.response, 200);
    // JSON, or an HTML page for a browser: the document says both.
    check(typeof home.data === 'object', `the home document: ${json(home.data)}`);
    same(home.data.todos, '/api/todos', 'the home document');
    answered('HEAD /', (await client.HEAD('/')).response, 200);
    answered('OPTIONS /', (await client.OPTIONS('/')).response, 204);
    const index = await client.GET('/api');
    answered('GET /api', index.response, 200);
    same(index.data, { widgets: '/api/widgets', todos: '/api/todos' }, 'the index');
    answered('HEAD /api', (await client.HEAD('/api')).response, 200);
    answered('OPTIONS /api', (await client.OPTIONS('/api')).response, 204);
    const health = await client.GET('/healthz');
    answered('GET /healthz', health.response, 200);
    same(health.data?.status, 'ok', 'the health');
    answered('HEAD /healthz', (await client.HEAD('/healthz')).response, 200);
    answered('OPTIONS /healthz', (await client.OPTIONS('/healthz')).response, 204);
    const document = await client.GET('/api/openapi.json');
    answered('GET /api/openapi.json', document.response, 200);
    check(typeof document.data === 'object' && document.data !== null, 'the document');
    const head = await client.HEAD('/api/openapi.json');
    answered('HEAD /api/openapi.json', head.response, 200);
    same(head.response.headers.get('ETag'), document.response.headers.get('ETag'), 'ETag of HEAD');
    const options = await client.OPTIONS('/api/openapi.json');
    answered('OPTIONS /api/openapi.json', options.response, 204);
    same(options.response.headers.get('Allow'), 'GET, HEAD, OPTIONS', 'Allow');
});

const todos: Todo[] = [];

await operation('POST /api/todos: a create of only {userId, title} type-checks and is taken', async () => {
    // The member left out: the document must not type it as required.
    const created = await client.POST('/api/todos', { body: { userId: 1, title: 'Buy milk' } });
    answered('POST /api/todos', created.response, 201);
    check(created.data !== undefined, 'no todo');
    same(created.data, { id: created.data.id, userId: 1, title: 'Buy milk', completed: false }, 'the todo');
    same(created.response.headers.get('Location'), `/api/todos/${created.data.id}`, 'Location');
    todos.push(created.data);
    for (const body of [
        { userId: 2, title: 'Walk the dog', completed: true },
        { userId: 1, title: 'Buy bread', completed: true },
    ]) {
        const { data } = await client.POST('/api/todos', { body });
        check(data !== undefined, 'no todo');
        same(data, { id: data.id, ...body }, 'the todo');
        todos.push(data);
    }
    return `ids ${todos.map(t => t.id).join(', ')}`;
});

await operation('GET, HEAD, OPTIONS /api/todos: filters, sort, pages', async () => {
    const all = await client.GET('/api/todos');
    answered('GET /api/todos', all.response, 200);
    same(all.data, todos, 'every todo');
    const some = await client.GET('/api/todos', {
        params: { query: { userId: [1], title_like: 'BUY', _sort: 'title', _order: 'desc' } },
    });
    same(some.data, [todos[0], todos[2]], 'userId 1, "buy" in the title, by title descending');
    same(some.response.headers.get('X-Total-Count'), '2', 'X-Total-Count');
    const page = await client.GET('/api/todos', { params: { query: { completed: [true], _page: 2, _limit: 1 } } });
    same(page.data, [todos[2]], 'page 2 of the completed, one a page');
    check(page.response.headers.get('Link')?.includes('rel="prev"') === true, 'Link');
    const head = await client.HEAD('/api/todos', { params: { query: { q: 'dog' } } });
    answered('HEAD /api/todos', head.response, 200);
    same(head.response.headers.get('X-Total-Count'), '1', 'X-Total-Count of HEAD');
    answered('OPTIONS /api/todos', (await client.OPTIONS('/api/todos')).response, 204);
});

await operation('GET, HEAD, PUT, PATCH, OPTIONS /api/todos/{id}', async () => {
    const path = { id: todos[1].id };
    const got = await client.GET('/api/todos/{id}', { params: { path } });
    answered('GET /api/todos/{id}', got.response, 200);
    same(got.data, todos[1], 'the todo');
    const head = await client.HEAD('/api/todos/{id}', { params: { path } });
    answered('HEAD /api/todos/{id}', head.response, 200);
    same(head.response.headers.get('ETag'), got.response.headers.get('ETag'), 'ETag');
    const put = await client.PUT('/api/todos/{id}', { params: { path }, body: { title: 'Walk the cat' } });
    answered('PUT /api/todos/{id}', put.response, 200);
    same(put.data, { ...todos[1], title: 'Walk the cat' }, 'the todo after PUT');
    const etag = put.response.headers.get('ETag') ?? '';
    const patch = await client.PATCH('/api/todos/{id}', {
        params: { path, header: { 'If-Match': etag } },
        body: { completed: false },
    });
    answered('PATCH /api/todos/{id}', patch.response, 200);
    same(patch.data, { ...todos[1], title: 'Walk the cat', completed: false }, 'the todo after PATCH');
    todos[1] = { ...todos[1], title: 'Walk the cat', completed: false };
    answered('OPTIONS /api/todos/{id}', (await client.OPTIONS('/api/todos/{id}', { params: { path } })).response, 204);
});

await operation('errors: 400, 404, 412, 415, 422 as typed problem documents', async () => {
    const bad = await client.GET('/api/todos', { params: { query: { _sort: 'nope' } } });
    problem(bad.error, 400, "bad query parameter '_sort': 'nope' is not a field; fields: id, userId, title, completed");
    const missing = await client.GET('/api/todos/{id}', { params: { path: { id: 99 } } });
    problem(missing.error, 404, 'no todo with id 99');
    const id = todos[0].id;
    const stale = await client.PATCH('/api/todos/{id}', {
        params: { path: { id }, header: { 'If-Match': '"0-0000000000000000"' } },
        body: { title: 'x' },
    });
    problem(
        stale.error,
        412,
        `If-Match: "0-0000000000000000" does not match the current version of todo ${id}; ` +
            'GET the item again for its current ETag, then retry with that in If-Match'
    );
    const plain = await client.POST('/api/todos', {
        body: { userId: 1, title: 'x' },
        headers: { 'Content-Type': 'text/plain' },
    });
    problem(
        plain.error,
        415,
        "Content-Type 'text/plain' is not supported; " +
            'send Content-Type: application/json or application/x-www-form-urlencoded'
    );
    // A 422's errors: each field's by its name, and root.serverError.
    const invalid = await client.POST('/api/todos', { body: { userId: 0, title: '' } });
    const message =
        'the todo has 2 invalid fields: userId must be an integer from 1 to 9007199254740991; ' +
        'title must be 1 to 1000 characters long';
    const refused = problem(invalid.error, 422, message);
    const errors = refused.errors;
    check(errors !== undefined, 'no errors member');
    same(errors.userId, 'must be an integer from 1 to 9007199254740991', 'errors.userId');
    same(errors.title, 'must be 1 to 1000 characters long', 'errors.title');
    same(errors.root.serverError, message, 'errors.root.serverError');
    const list = await client.GET('/api/todos');
    same(list.data, todos, 'nothing changed');
});

await operation('DELETE /api/todos/{id}: 200 with the todo; Prefer: return=minimal, 204', async () => {
    const deleted = await client.DELETE('/api/todos/{id}', { params: { path: { id: todos[2].id } } });
    answered('DELETE /api/todos/{id}', deleted.response, 200);
    same(deleted.data, todos[2], 'the todo deleted');
    const minimal = await client.DELETE('/api/todos/{id}', {
        params: { path: { id: todos[1].id }, header: { Prefer: 'return=minimal' } },
    });
    same(minimal.response.status, 204, 'status with return=minimal');
    same(minimal.response.headers.get('Preference-Applied'), 'return=minimal', 'Preference-Applied');
    const { data } = await client.GET('/api/todos');
    same(data, [todos[0]], 'what is left');
});

await operation('every operation on /api/widgets and /api/widgets/{id}', async () => {
    const created = await client.POST('/api/widgets', { body: { price: '$10', quality: 'good' } });
    answered('POST /api/widgets', created.response, 201);
    check(created.data !== undefined, 'no widget');
    const widget = created.data;
    const path = { id: widget.id };
    const list = await client.GET('/api/widgets', { params: { query: { price: ['$10'] } } });
    answered('GET /api/widgets', list.response, 200);
    same(list.data, [widget], 'the widgets');
    answered('HEAD /api/widgets', (await client.HEAD('/api/widgets')).response, 200);
    answered('OPTIONS /api/widgets', (await client.OPTIONS('/api/widgets')).response, 204);
    const got = await client.GET('/api/widgets/{id}', { params: { path } });
    answered('GET /api/widgets/{id}', got.response, 200);
    same(got.data, widget, 'the widget');
    answered('HEAD /api/widgets/{id}', (await client.HEAD('/api/widgets/{id}', { params: { path } })).response, 200);
    const put = await client.PUT('/api/widgets/{id}', { params: { path }, body: { price: '$12' } });
    answered('PUT /api/widgets/{id}', put.response, 200);
    const patch = await client.PATCH('/api/widgets/{id}', { params: { path }, body: { quality: 'great' } });
    answered('PATCH /api/widgets/{id}', patch.response, 200);
    same(patch.data, { id: widget.id, price: '$12', quality: 'great' }, 'the widget after PUT and PATCH');
    const options = await client.OPTIONS('/api/widgets/{id}', { params: { path } });
    answered('OPTIONS /api/widgets/{id}', options.response, 204);
    const deleted = await client.DELETE('/api/widgets/{id}', { params: { path } });
    answered('DELETE /api/widgets/{id}', deleted.response, 200);
    same(deleted.data, patch.data, 'the widget deleted');
});

await operation('GET, HEAD, OPTIONS /api/events', async () => {
    // A client that does not name text/event-stream in Accept gets the
    // events held, then the end of the stream: text, read as text.
    const events = await client.GET('/api/events', {
        params: { query: { collection: 'widgets', _limit: 1 } },
        parseAs: 'text',
    });
    answered('GET /api/events', events.response, 200);
    same(events.response.headers.get('Content-Type'), 'text/event-stream', 'Content-Type');
    check(typeof events.data === 'string' && events.data.startsWith('retry: '), 'the stream opens with retry');
    answered('HEAD /api/events', (await client.HEAD('/api/events')).response, 200);
    const options = await client.OPTIONS('/api/events');
    answered('OPTIONS /api/events', options.response, 204);
    same(options.response.headers.get('Allow'), 'GET, HEAD, OPTIONS', 'Allow');
});

await operation('every operation of the served document was called', async () => {
    const { data } = await client.GET('/api/openapi.json');
    const document = data as { paths: Record<string, Record<string, unknown>> };
    const methods = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'];
    const served = Object.entries(document.paths).flatMap(([path, item]) =>
        Object.keys(item)
            .filter(method => methods.includes(method))
            .map(method => `${method.toUpperCase()} ${path}`)
    );
    const missed = served.filter(op => !called.has(op));
    same(missed, [], 'operations not called');
    return `${served.length} operations`;
});

console.log(`typed: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
