"""A Python client generated from the served OpenAPI document by
openapi-python-client, unchanged, against a running widgets-todos:

    API_URL=http://127.0.0.1:8080/api PYTHONPATH=DIR python3 python_client.py

Run by scripts/clients.sh, which generates the package
`widgets_todos_client` under DIR from /api/openapi.json and runs this file
with the pinned Python packages of requirements.txt. Creates todos with
and without `completed` (left out, the server's default, `false`), lists
them by user, updates and deletes one, and reads the problem of a 404 and
of a 422 as the generated models give them. Prints one line per check and
"python: N passed, M failed".
"""

import os
import re
import sys
import threading

from widgets_todos_client import Client
from widgets_todos_client.api.todos import (
    create_todo,
    delete_todo,
    get_todo,
    list_todos,
    patch_todo,
    replace_todo,
)
from widgets_todos_client.models import Problem, Todo, TodoCreate, TodoUpdate

API_URL = os.environ.get("API_URL", "")
if not re.fullmatch(r"http://127\.0\.0\.1:\d+/api", API_URL):
    print("set API_URL to http://127.0.0.1:PORT/api", file=sys.stderr)
    sys.exit(2)


def out_of_time():
    print("FAIL: the whole run took more than 60 s", flush=True)
    os._exit(1)


threading.Timer(60, out_of_time).start()

client = Client(base_url=API_URL[: -len("/api")], timeout=10.0)
# The generation, done by scripts/clients.sh, counts as checks too.
passed = int(os.environ.get("PYTHON_CHECKS", "0"))
failed = 0


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def same(actual, expected, what):
    check(actual == expected, f"{what}: expected {expected!r}, got {actual!r}")


def operation(name, body):
    global passed, failed
    try:
        detail = body()
        passed += 1
        print(f"ok {passed + failed} - {name}{': ' + detail if detail else ''}", flush=True)
    except Exception as e:  # every failure is reported, none stops the run
        failed += 1
        print(f"FAIL {passed + failed} - {name}: {type(e).__name__}: {e}", flush=True)


created = {}


def create_with_completed():
    response = create_todo.sync_detailed(
        client=client, body=TodoCreate(user_id=1, title="Buy milk", completed=True)
    )
    same(response.status_code, 201, "status")
    todo = response.parsed
    check(isinstance(todo, Todo), f"a Todo, got {todo!r}")
    same((todo.user_id, todo.title, todo.completed), (1, "Buy milk", True), "the todo")
    same(response.headers.get("Location"), f"/api/todos/{todo.id}", "Location")
    created["done"] = todo
    return f"id {todo.id}"


def create_without_completed():
    todo = create_todo.sync(client=client, body=TodoCreate(user_id=2, title="Call mom"))
    check(isinstance(todo, Todo), f"a Todo, got {todo!r}")
    same((todo.user_id, todo.title, todo.completed), (2, "Call mom", False), "the todo")
    created["open"] = todo
    return f"id {todo.id}"


def list_by_user():
    everything = list_todos.sync(client=client)
    same([t.id for t in everything], sorted(t.id for t in created.values()), "all ids")
    mine = list_todos.sync(client=client, user_id=[2])
    same([t.to_dict() for t in mine], [created["open"].to_dict()], "the todos of user 2")
    both = list_todos.sync(client=client, user_id=[1, 2], completed=[False])
    same([t.id for t in both], [created["open"].id], "user 1 or 2, not completed")


def update():
    todo = created["open"]
    patched = patch_todo.sync(todo.id, client=client, body=TodoUpdate(completed=True))
    check(isinstance(patched, Todo), f"a Todo, got {patched!r}")
    same(patched.completed, True, "completed after PATCH")
    replaced = replace_todo.sync(todo.id, client=client, body=TodoUpdate(title="Call mum"))
    same((replaced.title, replaced.completed), ("Call mum", True), "after PUT")
    same(get_todo.sync(todo.id, client=client).to_dict(), replaced.to_dict(), "GET after PUT")


def delete():
    todo = created["done"]
    response = delete_todo.sync_detailed(todo.id, client=client)
    same(response.status_code, 200, "status")
    same(response.parsed.to_dict(), todo.to_dict(), "the todo deleted")
    minimal = delete_todo.sync_detailed(created["open"].id, client=client, prefer="return=minimal")
    same((minimal.status_code, minimal.parsed), (204, None), "with Prefer: return=minimal")
    missing = get_todo.sync(todo.id, client=client)
    check(isinstance(missing, Problem), f"a Problem, got {missing!r}")
    same((missing.status, missing.message), (404, f"no todo with id {todo.id}"), "the 404")


def invalid():
    problem = create_todo.sync(client=client, body=TodoCreate(user_id=0, title=""))
    check(isinstance(problem, Problem), f"a Problem, got {problem!r}")
    same(problem.status, 422, "status")
    fields = problem.errors.additional_properties
    same(sorted(fields), ["title", "userId"], "the fields in error")
    same(fields["userId"], "must be an integer from 1 to 9007199254740991", "userId's error")
    check(problem.errors.root.server_error == problem.message, "root.serverError is the message")
    return problem.message


operation("create a todo with completed", create_with_completed)
operation("create a todo without completed: false", create_without_completed)
operation("list, by userId (a list) and completed", list_by_user)
operation("update: PATCH, then PUT", update)
operation("delete: 200 with the todo, 204 with return=minimal, then 404", delete)
operation("a 422 read as a Problem", invalid)
print(f"python: {passed} passed, {failed} failed", flush=True)
os._exit(1 if failed else 0)
