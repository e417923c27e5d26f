"""The lark grammars of capver's languages (package data; see :mod:`capver.languages`)."""
