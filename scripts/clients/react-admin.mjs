// What a react-admin user sees when the server refuses a request, with
// either REST data provider: the notification (react-admin shows the
// HttpError's message, which ra-core's fetchJson takes from the body's
// `message`), and on a 422 the server's field errors on the form's inputs.
//
// The form is react-hook-form's, as react-admin's <Form> makes it; the
// errors reach it as react-admin's own code passes them: its create and
// edit controllers return the HttpError's `body.errors` from `save`, its
// form hands them to ra-core's setSubmissionErrors, and its
// useNotifyIsFormInvalid notifies `root.serverError` when there is one.
import { fetchUtils, setSubmissionErrors } from 'ra-core';
import { createFormControl } from 'react-hook-form';

import { MESSAGES, STALE_TAG, check, failure, same } from './lib.mjs';

/** fetchJson with one more request header, as react-admin's docs add one. */
export const withHeader = (name, value) => (url, options = {}) => {
    const headers = options.headers || new Headers({ Accept: 'application/json' });
    headers.set(name, value);
    return fetchUtils.fetchJson(url, { ...options, headers });
};

/** Checks that `error` is ra-core's HttpError with this status and message. */
export function notifies(error, status, message) {
    check(error && error.name === 'HttpError', `expected an HttpError, got ${error}`);
    same(error.status, status, 'status');
    same(error.message, message, 'the notification (HttpError message)');
    return `${status}: ${JSON.stringify(error.message)}`;
}

/**
 * A 422 as react-admin's form shows it: each field error on its input,
 * and the server's sentence as the form's notification.
 */
export function formShows(error, values) {
    notifies(error, 422, MESSAGES.invalid);
    const errors = error.body && error.body.errors;
    check(errors && typeof errors === 'object' && !Array.isArray(errors), `body.errors: ${JSON.stringify(errors)}`);
    const form = createFormControl({ defaultValues: values }).formControl;
    setSubmissionErrors(errors, form.setError);
    for (const [field, message] of Object.entries(MESSAGES.invalidFields)) {
        same(form.getFieldState(field).error?.message, message, `the error under the ${field} input`);
    }
    same(form.getFieldState('completed').error, undefined, 'the error under the completed input');
    // What useNotifyIsFormInvalid shows instead of "the form is not valid".
    same(form.getFieldState('root.serverError').error?.message, MESSAGES.invalid, 'the form notification');
    return 'userId, title: their errors; notification: the server\'s sentence';
}

/**
 * The error cases every react-admin provider meets: 400 (from `badList`,
 * whose message is `badListMessage`), 404, 412, 415 and 422. `provider`
 * is the provider with fetchJson; `make` makes one with another
 * httpClient. `todo` is a stored todo, which none of these may change.
 */
export async function errorCases(operation, { provider, make, todo, missing, badList, badListMessage }) {
    const unchanged = async () => same((await provider.getOne('todos', { id: todo.id })).data, todo, 'the stored todo');

    await operation('400: a filter the server does not take is a notification of its sentence', async () => {
        const error = await failure(provider.getList('todos', badList), 'getList');
        return notifies(error, 400, badListMessage);
    });
    await operation('404: getOne of an id never created', async () => {
        const error = await failure(provider.getOne('todos', { id: missing }), 'getOne');
        return notifies(error, 404, MESSAGES.missing(missing));
    });
    await operation('412: update with a stale If-Match (a custom httpClient)', async () => {
        const stale = make(withHeader('If-Match', STALE_TAG));
        const data = { ...todo, title: 'changed' };
        const error = await failure(stale.update('todos', { id: todo.id, data, previousData: todo }), 'update');
        const shown = notifies(error, 412, MESSAGES.stale(todo.id));
        await unchanged();
        return shown;
    });
    await operation('415: create sent as text/plain (a custom httpClient)', async () => {
        const plain = make(withHeader('Content-Type', 'text/plain'));
        const error = await failure(plain.create('todos', { data: { userId: 1, title: 'x' } }), 'create');
        return notifies(error, 415, MESSAGES.unsupported);
    });
    await operation('422: create form, each field error on its input', async () => {
        const values = { userId: 0 };
        const error = await failure(provider.create('todos', { data: values }), 'create');
        return formShows(error, values);
    });
    await operation('422: edit form (update), the field error on its input', async () => {
        const values = { ...todo, userId: 0 };
        const error = await failure(provider.update('todos', { id: todo.id, data: values, previousData: todo }), 'update');
        const message = 'the todo has 1 invalid field: userId must be an integer from 1 to 9007199254740991';
        notifies(error, 422, message);
        const form = createFormControl({ defaultValues: values }).formControl;
        setSubmissionErrors(error.body.errors, form.setError);
        same(form.getFieldState('userId').error?.message, MESSAGES.invalidFields.userId, 'the error under the userId input');
        same(form.getFieldState('title').error, undefined, 'the error under the title input');
        same(form.getFieldState('root.serverError').error?.message, message, 'the form notification');
        await unchanged();
        return 'userId: its error';
    });
}
