// What every client check of scripts/clients.sh shares: the server's URL,
// time limits, one line per operation, and the closing summary
// "NAME: N passed, M failed" that scripts/test.sh counts.

export const API_URL = process.env.API_URL;
if (!API_URL || !/^http:\/\/127\.0\.0\.1:\d+\/api$/.test(API_URL)) {
    console.error('set API_URL to http://127.0.0.1:PORT/api');
    process.exit(2);
}
const CALL_TIMEOUT_MS = 10_000;
setTimeout(() => {
    console.log('FAIL: the whole run took more than 60 s');
    process.exit(1);
}, 60_000).unref();

export class CheckError extends Error {}
export function check(condition, message) {
    if (!condition) throw new CheckError(message);
}
export const json = value => JSON.stringify(value);
export function same(actual, expected, what) {
    check(json(actual) === json(expected), `${what}: expected ${json(expected)}, got ${json(actual)}`);
}

/** `promise`, or a rejection after the time limit of one call. */
export function withTimeout(promise) {
    let timer;
    const limit = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CALL_TIMEOUT_MS} ms`)), CALL_TIMEOUT_MS);
    });
    return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** What a promise that should fail failed with; a check fails if it did not. */
export async function failure(promise, what) {
    const outcome = await withTimeout(promise).then(
        value => ({ resolved: value }),
        error => ({ error })
    );
    check(!('resolved' in outcome), `${what}: expected a failure, got ${json(outcome.resolved)}`);
    return outcome.error;
}

/** The requests a check sent, to say so when it fails (see `record`). */
export let sent = [];
export function record(call) {
    sent.push(call);
    return answered => {
        sent[sent.indexOf(call)] = `${call} -> ${answered}`;
    };
}

/** Watches what `fetch` sends, passing everything on unchanged. */
export function watchFetch() {
    const realFetch = globalThis.fetch;
    globalThis.fetch = (url, options = {}) => {
        const done = record(`${options.method || 'GET'} ${String(url).slice(API_URL.length - 4)}`);
        return realFetch(url, options).then(response => {
            done(response.status);
            return response;
        });
    };
}

let passed = 0;
let failed = 0;
let n = 0;

/** Runs one check; `body` returns a detail to print, or throws. */
export async function operation(name, body) {
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
        else if (e && (e.status || e.statusCode)) why = `HTTP error ${e.status || e.statusCode} ${json(e.body ?? e.message)}`;
        else why = `${e && e.name}: ${e && e.message}`;
        console.log(`FAIL ${n} - ${name}: ${why}`);
        if (sent.length) console.log(`    sent: ${sent.join('; ')}`);
    }
}

/** Prints the summary line and exits: 1 if any check failed. */
export function finish(name) {
    console.log(`${name}: ${passed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
}

// The store starts empty: each client's checks create these todos first,
// and know from then on exactly what the server holds.
export const SEED = [
    { userId: 1, title: 'Buy milk', completed: false },
    { userId: 1, title: 'Walk the dog', completed: true },
    { userId: 2, title: 'Call mom' }, // completed left out: false
    { userId: 2, title: 'Buy bread', completed: true },
    { userId: 3, title: 'Pay rent', completed: false },
    { userId: 1, title: 'Answer mail', completed: false },
];

/** The item the server makes of each of SEED, given their ids. */
export const seeded = ids =>
    SEED.map((data, i) => ({ id: ids[i], userId: data.userId, title: data.title, completed: data.completed ?? false }));

/**
 * What the server's problem documents say for the error cases each client
 * checks, given the ids: the `message` a notification shows, and the field
 * errors of a 422.
 */
export const MESSAGES = {
    missing: id => `no todo with id ${id}`,
    stale: id =>
        `If-Match: "0-0000000000000000" does not match the current version of todo ${id}; ` +
        'GET the item again for its current ETag, then retry with that in If-Match',
    unsupported:
        "Content-Type 'text/plain' is not supported; " +
        'send Content-Type: application/json or application/x-www-form-urlencoded',
    invalid:
        'the todo has 2 invalid fields: userId must be an integer from 1 to 9007199254740991; title is required',
    invalidFields: {
        userId: 'must be an integer from 1 to 9007199254740991',
        title: 'is required',
    },
};
export const STALE_TAG = '"0-0000000000000000"';
