"""A setting's value inside an error message: as the user typed it in English, its term in Chinese.

>>> Term("bh").text("en"), Term("bh").text("zh")
("'bh'", 'Benjamini–Hochberg 校正（bh）')
>>> f"correction {Term('bh')}", Term("an-unknown-value").text("zh")
("correction 'bh'", "'an-unknown-value'")
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Term"]


@dataclass(frozen=True)
class Term:
    """``value`` as a keyed message shows it: Python's ``repr`` in English (what an f-string's ``{value!r}`` says),
    the term of :data:`rankscope.choices.TERMS` in Chinese (``setting`` names the option when the value alone is
    ambiguous: ``missing``), or the ``repr`` again for a value with no term (a typo is shown as typed)."""

    value: object
    setting: str | None = None

    def text(self, lang: str = "en") -> str:
        from rankscope.choices import TERMS

        if lang == "zh":
            text = str(getattr(self.value, "value", self.value))
            found = TERMS.get(f"{self.setting}={text}" if self.setting else text, TERMS.get(text))
            if found is not None:
                return found
        return repr(self.value)

    def __str__(self) -> str:
        return self.text("en")

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)
