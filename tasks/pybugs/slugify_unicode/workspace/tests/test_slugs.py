from blog import SlugRegistry, slugify, unique_slug


def test_basic():
    assert slugify("Hello World") == "hello-world"


def test_accents():
    assert slugify("Crème Brûlée") == "creme-brulee"


def test_collapse_and_strip():
    assert slugify("  Hello,   World!! ") == "hello-world"


def test_unique():
    reg = SlugRegistry(["hello"])
    assert unique_slug("Hello", reg) == "hello-2"
