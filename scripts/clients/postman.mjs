// Postman's converter and runner, unchanged, against a running
// widgets-todos started on the sample data (scripts/seed.json):
//
//   API_URL=http://127.0.0.1:8080/api node target/clients/postman.mjs
//
// Run by scripts/clients.sh (see ra-json-server.mjs). openapi-to-postmanv2
// makes a collection of the served document as Postman's import does, in
// Example mode (each parameter and body from the document's `example`; the
// converter's other options as they come: every optional parameter sent,
// requests in the document's order), and newman runs it once. Every
// request must succeed: a status below 400, and an answer within 10 s
// (the change feed's included: its example `_limit=0` ends the stream).
// Prints one line per request and "postman: N passed, M failed".
import { createRequire } from 'node:module';

import { API_URL, withTimeout } from './lib.mjs';

const require = createRequire(import.meta.url);
const Converter = require('openapi-to-postmanv2');
const newman = require('newman');

const BASE = API_URL.slice(0, -'/api'.length);
const document = await withTimeout(fetch(`${API_URL}/openapi.json`).then(response => response.text()));

const collection = await new Promise((resolve, reject) => {
    Converter.convertV2({ type: 'string', data: document }, { parametersResolution: 'Example' }, (error, result) => {
        if (error) reject(error);
        else if (!result.result) reject(new Error(result.reason));
        else resolve(result.output[0].data);
    });
});

const summary = await new Promise((resolve, reject) => {
    newman.run(
        {
            collection,
            envVar: [{ key: 'baseUrl', value: BASE }],
            reporters: [],
            timeoutRequest: 10_000,
            timeout: 50_000,
        },
        (error, summary) => (error ? reject(error) : resolve(summary))
    );
});

let passed = 0;
let failed = 0;
for (const [i, execution] of summary.run.executions.entries()) {
    const { method } = execution.request;
    const url = execution.request.url.toString().slice(BASE.length);
    const status = execution.response?.code;
    const why = execution.requestError?.message;
    if (status !== undefined && status < 400 && !why) {
        passed += 1;
        console.log(`ok ${i + 1} - ${method} ${url}: ${status}`);
    } else {
        failed += 1;
        console.log(`FAIL ${i + 1} - ${method} ${url}: ${why ?? `${status} ${execution.response?.text()}`}`);
    }
}
if (passed + failed === 0) {
    failed = 1;
    console.log('FAIL: the collection made of the served document has no request');
}
console.log(`postman: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
