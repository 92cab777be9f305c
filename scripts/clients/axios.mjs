// axios, unchanged, against a running widgets-todos:
//
//   API_URL=http://127.0.0.1:8080/api node target/clients/axios.mjs
//
// Run by scripts/clients.sh (see ra-json-server.mjs). axios sends an
// array in `params` its own way by default, `userId[]=1&userId[]=2` (as
// the qs library does, which many other clients use), and json-server
// answers the todos of both users: so must this server. Also the form
// without brackets that axios sends with `paramsSerializer: {indexes:
// null}`, and the errors axios raises (a 404, a 422). Prints one line per
// check and "axios: N passed, M failed".
import axios from 'axios';

import { API_URL, CheckError, MESSAGES, SEED, check, failure, finish, json, operation, record, same, seeded, withTimeout } from './lib.mjs';

const client = axios.create({ baseURL: API_URL });
client.interceptors.request.use(config => {
    config.done = record(`${config.method.toUpperCase()} ${client.getUri(config).slice(API_URL.length - 4)}`);
    return config;
});
client.interceptors.response.use(
    response => {
        response.config.done?.(response.status);
        return response;
    },
    error => {
        error.config?.done?.(error.response?.status);
        return Promise.reject(error);
    }
);

let todos = [];

/** A GET's data; a rejection says the status and the server's message. */
const read = (url, config) =>
    withTimeout(client.get(url, config)).then(
        response => response.data,
        error => {
            const { status, data } = error.response ?? {};
            throw new CheckError(`${status ?? error.message}: ${data?.message ?? ''}`);
        }
    );

await operation('create the todos', async () => {
    const ids = [];
    for (const data of SEED) {
        const { status, data: todo } = await withTimeout(client.post('/todos', data));
        same(status, 201, 'status');
        ids.push(todo.id);
    }
    todos = seeded(ids);
    return `ids ${json(ids)}`;
});

const ofUsers = users => todos.filter(todo => users.includes(todo.userId));

await operation("params: {userId: [1, 2]}, axios's default: userId[]=1&userId[]=2", async () => {
    const config = { params: { userId: [1, 2] } };
    const sent = client.getUri({ url: '/todos', ...config });
    check(decodeURIComponent(sent).endsWith('/todos?userId[]=1&userId[]=2'), `axios sent ${sent}`);
    const data = await read('/todos', config);
    same(data, ofUsers([1, 2]), 'the todos of users 1 and 2');
    return `${data.length} todos`;
});

await operation('params: {userId: [1, 3]} with indexes: null: userId=1&userId=3', async () => {
    const config = { params: { userId: [1, 3] }, paramsSerializer: { indexes: null } };
    const data = await read('/todos', config);
    same(data, ofUsers([1, 3]), 'the todos of users 1 and 3');
    return `${data.length} todos`;
});

await operation('params: {completed: true, _sort: "title"}', async () => {
    const { data, headers } = await withTimeout(client.get('/todos', { params: { completed: true, _sort: 'title' } }));
    const expected = todos.filter(todo => todo.completed).sort((a, b) => (a.title < b.title ? -1 : 1));
    same(data, expected, 'the completed todos by title');
    same(headers['x-total-count'], String(expected.length), 'X-Total-Count');
});

await operation('a missing todo: axios rejects with the 404 and its message', async () => {
    const missing = Math.max(...todos.map(todo => todo.id)) + 1000;
    const error = await failure(client.get(`/todos/${missing}`), 'GET of a missing todo');
    same(error.response?.status, 404, 'status');
    same(error.response?.data?.message, MESSAGES.missing(missing), 'message');
});

await operation('an invalid todo: axios rejects with the 422 and its field errors', async () => {
    const error = await failure(client.post('/todos', { userId: 0 }), 'POST of an invalid todo');
    same(error.response?.status, 422, 'status');
    same(error.response?.data?.message, MESSAGES.invalid, 'message');
    const { root, ...fields } = error.response?.data?.errors ?? {};
    same(fields, MESSAGES.invalidFields, 'errors');
});

finish('axios');
