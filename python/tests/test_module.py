"""Reading, writing, printing and copying modules."""

import os

import pytest

import plir
from conftest import SMALL, path


def test_parse_gives_module(small):
    assert isinstance(small, plir.Module)
    assert small.names() == ["main"]
    assert len(small) == 1
    assert "main" in small and "other" not in small


def test_str_round_trips(small):
    text = str(small)
    assert text.startswith('#[version = "1"]')
    again = plir.parse(text)
    assert plir.structural_equal(small, again)
    assert str(again) == text


@pytest.mark.parametrize("fmt,suffix", [("text", ".plir"), ("json", ".json"), ("binary", ".plirb")])
def test_save_load_every_format(tmp_path, blocks, fmt, suffix):
    p = tmp_path / ("m" + suffix)
    blocks.save(str(p))  # format from the suffix
    data = p.read_bytes()
    if fmt == "binary":
        assert data[:5] == b"\x89PLIR"
    elif fmt == "json":
        assert data.lstrip()[:1] == b"{"
    else:
        assert data.startswith(b'#[version = "1"]')
    back = plir.load(p)  # os.PathLike
    assert plir.structural_equal(blocks, back)


def test_save_format_argument_overrides_suffix(tmp_path, small):
    p = tmp_path / "m.plir"
    plir.save(small, str(p), format="json")
    assert p.read_bytes().lstrip()[:1] == b"{"
    assert plir.structural_equal(plir.load(str(p)), small)


def test_save_bad_format(tmp_path, small):
    with pytest.raises(ValueError, match="format"):
        small.save(str(tmp_path / "x.plir"), format="yaml")
    assert not os.path.exists(tmp_path / "x.plir")


def test_loads_bytes_any_format(blocks):
    for fmt in ("text", "json", "binary"):
        data = blocks.serialize(fmt)
        assert isinstance(data, bytes)
        assert plir.structural_equal(plir.loads(data), blocks)


def test_copy_is_same_contents(small):
    c = small.copy()
    assert c.same_as(small)
    assert c == small
    assert c is not small
    assert c["main"] == small["main"]  # the very same function node


def test_copy_module_protocol(small):
    import copy

    assert copy.copy(small).same_as(small)
    assert copy.deepcopy(small).same_as(small)


def test_parse_error_has_location():
    with pytest.raises(plir.ParseError) as e:
        plir.parse("def @main() -> Tensor {\n  %x = add(;\n}\n", "bad.plir")
    assert e.value.file == "bad.plir"
    assert e.value.line == 2
    assert e.value.column > 1
    assert "bad.plir:2:" in str(e.value)


def test_parse_error_is_plir_error():
    assert issubclass(plir.ParseError, plir.PlirError)
    with pytest.raises(plir.PlirError):
        plir.parse("nonsense")


def test_load_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        plir.load(str(tmp_path / "missing.plir"))


def test_load_directory_is_error(tmp_path):
    with pytest.raises(plir.ParseError, match=str(tmp_path)):
        plir.load(str(tmp_path))


def test_load_corrupt_binary(tmp_path, small):
    data = small.serialize("binary")
    p = tmp_path / "cut.plirb"
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(plir.ParseError):
        plir.load(str(p))


@pytest.mark.parametrize(
    "call,param",
    [
        (lambda: plir.parse(5), "text"),
        (lambda: plir.parse(SMALL, name=3), "name"),
        (lambda: plir.load(7), "path"),
        (lambda: plir.save("not a module", "/tmp/x.plir"), "mod"),
        (lambda: plir.loads("text"), "data"),
        (lambda: plir.verify(None), "mod"),
    ],
)
def test_type_errors_name_the_parameter(call, param):
    with pytest.raises(TypeError, match="'%s'" % param):
        call()


def test_with_item_and_without(small, conv):
    both = small.with_item(conv["main"].with_attrs({"global_symbol": "conv"}))
    assert len(both) == 1  # same name: replaced in place
    renamed = plir.parse(str(conv).replace("@main", "@conv"))
    two = small.with_item(renamed["conv"])
    assert two.names() == ["main", "conv"]
    assert small.names() == ["main"]  # unchanged
    assert two.without("main").names() == ["conv"]
    assert two["main"] == small["main"]  # shared, not copied


def test_getitem_missing_raises_keyerror(small):
    with pytest.raises(KeyError):
        small["nope"]
    assert small.get("nope") is None


def test_examples_all_load():
    spec = path("examples/spec")
    names = [n for n in os.listdir(spec) if n.endswith(".plir")]
    assert names
    for n in names:
        m = plir.load(os.path.join(spec, n))
        assert plir.well_formed(m), n
