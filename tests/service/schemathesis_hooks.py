"""Schemathesis hooks of the conformance run (``SCHEMATHESIS_HOOKS``): the acceptance of schema-valid requests,
except for what no schema can say — the content of an uploaded file, which its reader checks (a file whose content
is refused is answered 422 naming the file's field), and the parts of a URL a pattern does not check (Punycode
labels, IPv6 addresses: answered 422 "not a valid URL" naming the URL's field) and a monitor's rules, schedule,
baseline and judge, each a small language of its own that the field's description gives (``'drop ndcg@10 0.02'``,
``{"cron": "*/15 * * * *"}``), refused naming the field."""

from __future__ import annotations

from typing import Any

import schemathesis
from schemathesis.checks import positive_data_acceptance

FILE_FIELDS = {"file", "queries", "corpus", "pool", "labels", "provenance"}
URL_FIELDS = {"retriever_url", "webhook_url"}
GRAMMAR_FIELDS = ("rules", "schedule", "baseline", "judge")


@schemathesis.check
def positive_data_acceptance_but_file_content(ctx: Any, response: Any, case: Any) -> bool | None:
    if response.status_code == 422:
        try:
            errors = response.json().get("errors", [])
        except ValueError:
            errors = []
        fields = {e.get("field") for e in errors}
        if fields and fields <= FILE_FIELDS:
            return None
        if errors and all(e.get("field") in URL_FIELDS and str(e.get("problem", "")).startswith("not a valid URL")
                          for e in errors):
            return None
        if errors and all(str(e.get("field", "")).startswith(GRAMMAR_FIELDS) for e in errors):
            return None
    return positive_data_acceptance(ctx, response, case)
