"""Schemathesis hooks of the conformance run (``SCHEMATHESIS_HOOKS``): the acceptance of schema-valid requests,
except for what no schema can say — the content of an uploaded file, which its reader checks (a file whose content
is refused is answered 422 naming the file's field)."""

from __future__ import annotations

from typing import Any

import schemathesis
from schemathesis.checks import positive_data_acceptance

FILE_FIELDS = {"file", "queries", "corpus", "pool", "labels", "provenance"}


@schemathesis.check
def positive_data_acceptance_but_file_content(ctx: Any, response: Any, case: Any) -> bool | None:
    if response.status_code == 422:
        try:
            fields = {e.get("field") for e in response.json().get("errors", [])}
        except ValueError:
            fields = set()
        if fields and fields <= FILE_FIELDS:
            return None
    return positive_data_acceptance(ctx, response, case)
