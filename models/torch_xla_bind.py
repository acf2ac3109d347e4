"""Bind torch_xla's HLO by name: each ENTRY parameter renamed after the tensor it reads.

torch_xla's HLO names its parameters p<number>.<id>, in the order its graph met the device data,
and says nothing of in-place updates. bind() makes the binding explicit in the text by torch_xla's
tensor ids (never by shape, which fails on two parameters of one shape): each parameter renamed
after the tensor it holds, scalar device data that is no named tensor made a constant, and an
`input_output_alias` in the module header saying which output is the new value of which
parameter. Used by models/mnist_train/export_torch.py (training steps) and
models/mnist_cnn/export.py (inference). Needs torch_xla at call time only.
"""
import re

ENTRY_PARAM = re.compile(r"^(\s*)%(\S+) = (\S+) parameter\((\d+)\)$", re.M)


def rewrite(hlo, names, constants, aliases):
    """torch_xla's HLO text with its ENTRY parameters renamed and renumbered.

    names: {parameter number: new name} for those that stay parameters; constants: {parameter
    number: float} for scalar device data inlined as constants; aliases: [(output index, new
    parameter number)], written as the header's input_output_alias.
    """
    entry_at = hlo.index("\nENTRY ")
    body = hlo[entry_at:]
    found = {int(num): (name, ty) for _, name, ty, num in ENTRY_PARAM.findall(body)}
    if sorted(found) != sorted(list(names) + list(constants)):
        raise SystemExit(f"ENTRY parameters {sorted(found)} are not the bound ones")
    kept = sorted(names)
    renumber = {old: new for new, old in enumerate(kept)}

    def param(m):
        indent, name, ty, num = m.group(1), m.group(2), m.group(3), int(m.group(4))
        if num in constants:
            return f"{indent}%{name} = {ty} constant({constants[num]!r})"
        return f"{indent}%{name} = {ty} parameter({renumber[num]})"

    body = ENTRY_PARAM.sub(param, body)
    for num, new in names.items():  # references are %name followed by a delimiter
        body = re.sub(rf"%{re.escape(found[num][0])}(?![\w.-])", f"%{new}", body)
    signature = ", ".join(f"{names[n]}: {re.sub(r'{[^}]*}', '', found[n][1])}" for n in kept)
    body = re.sub(r"^(\nENTRY \S+ )\(.*?\)( -> )", lambda m: f"{m.group(1)}({signature}){m.group(2)}", body,
                  count=1)
    header = hlo[:entry_at]
    first = header.index("\n")
    layout = ", ".join(found[n][1] for n in kept)
    alias = ", ".join(f"{{{out}}}: ({par}, {{}}, may-alias)" for out, par in aliases)
    line = re.sub(r"entry_computation_layout=\{\(.*?\)->", f"entry_computation_layout={{({layout})->",
                  header[:first], count=1)
    return (f"{line}, input_output_alias={{ {alias} }}" if aliases else line) + header[first:] + body


def hlo_name(key):
    """key as an HLO name, which starts with a letter or '_' (nn.Sequential's keys start with a digit)."""
    return key if re.match(r"[A-Za-z_]", key) else "_" + key


def tensor_ids(named):
    """{torch_xla tensor id: hlo_name(name)} of [(name, device tensor)]."""
    import torch_xla
    return {torch_xla._XLAC._xla_get_tensor_id(t): hlo_name(name) for name, t in named}


def bind(outs, ids, required, aliased=()):
    """The HLO of the device tensors outs, rewrite()n: each ENTRY parameter named after the tensor
    of ids ({tensor id: name}) whose device data it reads (torch_xla's parameter order is that of
    _get_tensors_xla_device_data_node), scalars that are none of them inlined, output K aliased to
    the parameter of aliased[K]; every name of required must be read."""
    import torch_xla
    hlo = torch_xla._XLAC._get_xla_tensors_hlo(outs)
    data_ids, tensors = torch_xla._XLAC._get_tensors_xla_device_data_node(outs)
    names, constants = {}, {}
    for num, (tid, t) in enumerate(zip(data_ids, tensors)):
        if tid in ids:
            names[num] = ids[tid]
        elif t.dim() == 0 and t.is_floating_point():
            constants[num] = float(t.cpu())
        else:
            raise SystemExit(f"parameter {num}: device data {tuple(t.shape)} {t.dtype} of no known tensor")
    missing = set(required) - set(names.values())
    if missing:
        raise SystemExit(f"the graph reads no parameter for {sorted(missing)}")
    number = {name: new for new, (_, name) in enumerate(sorted(names.items()))}
    return rewrite(hlo, names, constants, [(k, number[n]) for k, n in enumerate(aliased)])
