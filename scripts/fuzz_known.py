#!/usr/bin/env python3
"""Sorts the failures of a schemathesis run (its NDJSON report) into the
known ones, each with its reason in docs/testing.md ("What schemathesis still
reports"), and the rest.

    python3 scripts/fuzz_known.py REPORT.ndjson

Prints one line per kind of known failure with its count, and every other
failure in full; exits 1 when there is any other. Python 3, standard
library only. Each known kind is recognised by the exchange itself (the
check, the operation, the status, the problem's detail, the request's
header fields), never by the check alone, so that a real failure of the
same check is not let through.
"""

import base64
import json
import re
import sys
import urllib.parse

LISTS = {f"{method} /api/{collection}" for method in ("GET", "HEAD") for collection in ("todos", "widgets")}

# The list query's rules that OpenAPI cannot express (docs/queries.md, "List
# queries"): the start of each one's 400 detail.
COMBINATIONS = (
    "bad query parameter '_limit': with _page, _limit must be at least 1",
    "bad query parameter '_end': _end (",
    "bad query parameter '_order': _order needs _sort",
)
# `N orders given for M _sort fields`.
MORE_ORDERS = re.compile(r"^bad query parameter '_order': \d+ orders given for \d+ _sort fields$")

# A field name tiny_http takes: it refuses RFC 9110's other tchars.
LIBRARY_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
# A field value tiny_http takes: visible ASCII and spaces (no tab).
LIBRARY_VALUE = re.compile(r"^[\x20-\x7e]*$")


def detail(response):
    """The problem document's detail, or None."""
    content = (response or {}).get("content") or {}
    raw = content.get("$base64")
    try:
        body = base64.b64decode(raw) if raw is not None else content.get("body", "").encode()
        return json.loads(body).get("detail")
    except (ValueError, AttributeError):
        return None


# The syntax of If-Match and If-None-Match, as openapi.json gives it.
PRECONDITION = re.compile(r'^ *(\*|(, *)*(W/)?"[!#-~]*"( *,( *(W/)?"[!#-~]*")?)*) *$')


def breaks_a_combination(uri):
    """Whether a list query breaks one of COMBINATIONS' rules; for HEAD,
    whose 400 has no body to say which rule it broke."""
    query = urllib.parse.urlsplit(uri).query
    pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
    given = {name: value for name, value in pairs}
    slice_ = {}
    for name in ("_page", "_limit", "_start", "_end"):
        if name in given:
            if not given[name].isdigit():
                return False
            slice_[name] = int(given[name])
    page, limit, start, end = (slice_.get(n) for n in ("_page", "_limit", "_start", "_end"))
    if page is not None and limit == 0:
        return True
    if page is None and end is not None and end < (start or 0):
        return True
    if "_order" in given:
        sort = given.get("_sort")
        return sort is None or given["_order"].count(",") > sort.count(",")
    return False


def kind(code, operation, case, request, response):
    """The known kind of this failure, or None."""
    status = (response or {}).get("status_code")
    headers = (request or {}).get("headers") or {}
    meta = (case or {}).get("meta") or {}
    said = detail(response) or ""
    head = (request or {}).get("method") == "HEAD"
    if code == "ST202" and status == 400 and operation in LISTS:
        if said.startswith(COMBINATIONS) or MORE_ORDERS.match(said):
            return "the list query's combination rules"
        if head and breaks_a_combination(request.get("uri", "")):
            return "the list query's combination rules"
    if_match = headers.get("If-Match") or []
    if code == "ST202" and status == 412 and if_match and all(map(PRECONDITION.match, if_match)):
        return "412 for a well-formed If-Match that names another version"
    header_mode = ((meta.get("components") or {}).get("header") or {}).get("mode")
    if code == "ST202" and status == 400 and header_mode == "negative":
        if said.startswith(("If-Match: '", "If-None-Match: '")):
            return "a malformed precondition that schemathesis calls valid"
        malformed = [
            value for name in ("If-Match", "If-None-Match")
            for value in headers.get(name, []) if not PRECONDITION.match(value)
        ]
        if head and malformed:
            return "a malformed precondition that schemathesis calls valid"
    response_headers = {name.lower() for name in ((response or {}).get("headers") or {})}
    if status == 400 and "x-request-id" not in response_headers:
        refused = [
            name for name, values in headers.items()
            if not LIBRARY_NAME.match(name) or not all(LIBRARY_VALUE.match(v) for v in values)
        ]
        if refused and code in ("ST104", "ST107", "ST109"):
            return "the HTTP library's own 400 for a field it refuses"
    if code == "ST301" and (request or {}).get("method") == "OPTIONS" and status == 204:
        return "OPTIONS on a deleted item"
    return None


def failures(path):
    """(code, operation, case, request, response) for every failed check."""
    with open(path, encoding="utf-8") as report:
        for line in report:
            event = json.loads(line)
            finished = event.get("ScenarioFinished")
            if not finished or not finished.get("recorder"):
                continue
            recorder = finished["recorder"]
            cases = recorder.get("cases") or {}
            interactions = recorder.get("interactions") or {}
            for case_id, checks in (recorder.get("checks") or {}).items():
                for check in checks:
                    if check.get("status") != "failure":
                        continue
                    failure = (check.get("failure_info") or {}).get("failure") or {}
                    interaction = interactions.get(case_id) or {}
                    case = (cases.get(case_id) or {}).get("value")
                    yield (
                        failure.get("code"), failure.get("operation"), case,
                        interaction.get("request"), interaction.get("response"),
                    )


def main():
    known, unknown = {}, []
    for code, operation, case, request, response in failures(sys.argv[1]):
        found = kind(code, operation, case, request, response)
        if found:
            known[found] = known.get(found, 0) + 1
        else:
            unknown.append((code, operation, request, response, detail(response)))
    for found, count in sorted(known.items()):
        print(f"  known: {found}: {count}")
    for code, operation, request, response, said in unknown:
        status = (response or {}).get("status_code")
        print(f"  OTHER: {code} {operation}: {status} {said or ''}")
        print(f"         {json.dumps(request)[:600]}")
    print(f"  {sum(known.values())} known, {len(unknown)} other")
    return 1 if unknown else 0


if __name__ == "__main__":
    sys.exit(main())
