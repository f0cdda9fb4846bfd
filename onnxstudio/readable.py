"""One readable line from onnxruntime's and onnx's failure texts.

onnxruntime reports a kernel failure with its C++ source location and the full signature
of the function that failed ("/onnxruntime_src/…/conv_integer.cc:52 virtual
onnxruntime::common::Status onnxruntime::ConvInteger::Compute(onnxruntime::OpKernelContext*)
const …"), and an unnamed node as ``Name:''``; onnx's version converter glues printf
arguments after an unformatted "%s … %lld" text and writes opsets as ``$16``. The line
kept names the operator and the node and says what went wrong; the whole text stays
available behind Details (`errors.details_for`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

Nodes = Callable[[], Sequence[tuple[str, str]]]  # (op_type, name) of each node, in order

_ORT_PREFIX = re.compile(r"^\[ONNXRuntimeError\] : \d+ : (\w+) : ")
_LOCATION = re.compile(r"(?:[\w./\\-]+/)?[\w-]+\.(?:cc|cpp|cu|h|hpp):\d+ ")
_RUNNING = re.compile(r"Non-zero status code returned while running (\w+) node\. "
                      r"Name:'(.*?)' Status Message: ")
_NO_KERNEL = re.compile(r"Could not find an implementation for (\w+)\((\d+)\) node with "
                        r"name '(.*?)'")
_ASSERT = re.compile(r"^(?:[\w./\\-]+\.(?:cc|cpp|h|hpp):\d+: )?\w+: Assertion `.*?` "
                     r"failed: ")
_CONTEXT = re.compile(r"==> Context: Bad node spec for node\. Name: ?(.*?) OpType: (\S+)$")
_PLACEHOLDER = re.compile(r"%(?:l{0,2}[duifs]|zu|lu|llu)")
_SKIP = {"onnxruntime", "common", "contrib", "cuda", "detail", "std", "ml", "utils"}


def _signature_end(text: str) -> tuple[int, str]:
    """(where a C++ signature at the start of ``text`` ends, the class it names) or
    (0, "") when ``text`` does not start with one."""
    paren = text.find("(")
    head = text[:paren] if paren > 0 else ""
    if "::" not in head or len(head) > 300:
        return 0, ""
    depth, i = 0, paren
    while i < len(text):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            rest = text[i:]
            more = re.match(r"(?: const)?(?:::<lambda\(\)>)*(?: const)?(?: \[with [^\]]*\])?",
                            rest)
            i += more.end() if more else 0
            functor = re.search(r"functors::(\w+)", more.group(0) if more else "")
            if functor:  # ElementWiseKernel<F> [with F = …::functors::ScaledTanh<float>]
                return i, functor.group(1)
            break
    name = re.sub(r"<[^<>]*>", "", head.split()[-1]) if head.split() else ""
    parts = [p for p in name.split("::") if p and p not in _SKIP]
    op = next((p for p in parts if p[:1].isupper()), "")
    return i, op


def strip_cpp(text: str) -> tuple[str, str]:
    """``text`` without source locations and the C++ signatures after them, and the first
    class such a signature named (the kernel, e.g. "ConvInteger")."""
    out, op, pos = [], "", 0
    for m in _LOCATION.finditer(text):
        if m.start() < pos:
            continue
        out.append(text[pos:m.start()])
        end, named = _signature_end(text[m.end():])
        op = op or named
        pos = m.end() + end
    out.append(text[pos:])
    return " ".join("".join(out).split()), op


def _node(op: str, name: str, nodes: Nodes | None) -> str:
    """ "the ConvInteger node 'conv1'", or for an unnamed node its place in the graph."""
    if name:
        return f"{op} node '{name}'"
    found = [i for i, (kind, _) in enumerate(nodes() if nodes else ()) if kind == op]
    if len(found) == 1:
        return f"{op} node #{found[0]} (unnamed)"
    if found:
        return f"one of {len(found)} unnamed {op} nodes"
    return f"{op} node"


def ort_message(text: str, nodes: Nodes | None = None,
                dtypes: Mapping[int, str] | None = None) -> str:
    """onnxruntime's exception text as one line naming the operator and the node.

    ``nodes`` lists the model's nodes (asked only when a node has no name); ``dtypes``
    maps numpy type numbers to the inputs fed with them ("input 'x' (float8_e4m3fn)").
    """
    text = " ".join(str(text).split())
    code = ""
    m = _ORT_PREFIX.match(text)
    if m:
        code, text = m.group(1), text[m.end():]
    text = re.sub(r"^(?:Exception during initialization|Fatal error): ", "", text)
    text = re.sub(r" ?\[ONNXRuntimeError\] : \d+ : \w+ : ", " ", text).strip()
    m = _NO_KERNEL.search(text)
    if m:
        op, version, name = m.groups()
        old = " (onnxruntime supports ai.onnx from opset 7 on)" \
            if 0 <= int(version) < 7 and op[:1].isupper() else ""
        return (f"{_node(op, name, nodes)}: onnxruntime has no {op} (opset {version}) kernel "
                f"for these input types on this provider{old}")
    m = _RUNNING.search(text)
    message, kernel = strip_cpp(text[m.end():] if m else text)
    if m:
        return f"{_node(m.group(1), m.group(2), nodes)}: {message}"
    m = re.search(r"Numpy_type (\d+) can't be converted to MLDataType", message)
    if m:
        fed = (dtypes or {}).get(int(m.group(1)))
        return (f"onnxruntime's Python API cannot take {fed or 'an input'}: it accepts no "
                "ml_dtypes type (float8, int4, bfloat16)")
    m = re.search(r"No corresponding Numpy type for Tensor Type\.? ?(\w*)", message)
    if m:
        return (f"onnxruntime cannot hand a {m.group(1) or 'such'} output back to Python "
                "(numpy has no such dtype)")
    if kernel:
        return f"{kernel}: {message}"
    return message if not code or code in ("FAIL", "RUNTIME_EXCEPTION") else \
        f"{message} ({code.lower().replace('_', ' ')})"


def fill_placeholders(text: str, numbers: Sequence[int] = ()) -> str:
    """A printf text whose arguments were glued on unformatted ("Op '%s' … version %lld to
    %lld.Frobnicate1317") filled in: the numeric arguments are taken from ``numbers`` when
    the tail ends with them, one remaining text argument takes the rest; what cannot be
    placed is dropped, the unplaced tail kept in brackets."""
    marks = _PLACEHOLDER.findall(text)
    if not marks:
        return text
    last = max(m.end() for m in _PLACEHOLDER.finditer(text))
    stop = text.find(".", last)
    fmt, tail = (text[:stop + 1], text[stop + 1:]) if stop >= 0 else (text, "")
    values: list[str] | None = None
    numeric = [m for m in marks if m[-1] != "s"]
    digits = "".join(str(n) for n in numbers[-len(numeric):]) if numeric else ""
    if len(marks) - len(numeric) <= 1 and len(numbers) >= len(numeric) and \
            tail.endswith(digits) and len(tail) > len(digits):
        nums = iter(str(n) for n in numbers[-len(numeric):]) if numeric else iter(())
        word = tail[:len(tail) - len(digits)]
        values = [word if m[-1] == "s" else next(nums) for m in marks]
    elif len(marks) == 1 and tail:
        values = [tail]
    if values is None:
        out = _PLACEHOLDER.sub("", fmt).replace("''", "").replace(" .", ".")
        return " ".join(out.split()) + (f" ({tail})" if tail else "")
    filled = iter(values)
    return _PLACEHOLDER.sub(lambda _: next(filled), fmt)


def onnx_message(text: str, numbers: Sequence[int] = ()) -> str:
    """onnx's C++ assertion text (version converter, checker) as one line: no source
    location or assertion, opsets written "16" not "$16", placeholders filled."""
    text = " ".join(str(text).split())
    m = _CONTEXT.search(text)
    if m:  # the checker's context: the node it was checking
        name, op = m.groups()
        text = text[:m.start()].strip() + (f" (node '{name}', {op})" if name else
                                           f" (an unnamed {op} node)")
    text = _ASSERT.sub("", text)
    text = re.sub(r"(?<![\w.])\$(\d+)", r"\1", text)  # "Version $16"
    text = re.sub(r"(\w)\$(\d+)\b", r"\1 \2", text)  # "ai.onnx.ml$3"
    return fill_placeholders(text, numbers)
