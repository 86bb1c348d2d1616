"""Loading the catalogue of known mistakes, the mutants and the variants: what a good course
gives, and the exact sentence for each kind of broken file (autograder check exits 2 on them)."""

from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.mistakes import catalogue as catalogue_module
from autograder.mistakes import mutants as mutants_module
from autograder.mistakes import variants as variants_module
from autograder.mistakes.catalogue import CatalogueError, course_catalogue, load_catalogue
from autograder.mistakes.mutants import MutantError, load_mutants, write_mutant
from autograder.mistakes.variants import load_variants, write_variant

TOY = Path(__file__).parent / "toy_course"
NAMES = ["scale", "normalize"]
ENTRY = """
[[mistakes]]
id = "{slug}"
title = "A title"
explanation = "what to do instead"
notes = 'Toy notes, "A section"'
"""


@pytest.fixture(scope="module")
def toy():
    return load_course(TOY / "course.toml")


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def catalogue_error(folder: Path) -> str:
    with pytest.raises(CatalogueError) as caught:
        load_catalogue(folder, NAMES)
    return str(caught.value)


def mutant_error(call, *args) -> str:
    with pytest.raises(MutantError) as caught:
        call(*args)
    return str(caught.value)


# The toy course's own files ----------------------------------------------------------------


def test_toy_catalogue_has_full_ids_in_course_order_and_a_learner_sentence(toy):
    catalogue = course_catalogue(toy)
    assert [m.id for m in catalogue] == [
        "scale/adds-factor",
        "scale/accepts-infinity",
        "normalize/no-sqrt",
    ]
    assert catalogue.sentence("normalize/no-sqrt") == (
        "[normalize/no-sqrt] You divide by the squared length; take the square root of the sum "
        'of squares. Read: course notes, Toy notes, "Unit vectors".'
    )


def test_toy_mutants_and_variants_load_with_the_component_module_as_default_file(toy):
    mutants = load_mutants(toy.course.mutants, toy, course_catalogue(toy))
    assert [(m.mistake, m.component) for m in mutants] == [
        ("scale/adds-factor", "scale"),
        ("scale/accepts-infinity", "scale"),
        ("normalize/no-sqrt", "normalize"),
    ]
    assert {e.file for m in mutants for e in m.edits} == {"scale.py", "normalize.py"}
    variants = load_variants(toy.course.variants, toy)
    assert [(v.id, v.edits[0].file) for v in variants] == [
        ("scale/np-multiply", "scale.py"),
        ("normalize/linalg-norm", "normalize.py"),
    ]


def test_write_mutant_plants_exactly_its_edit_in_a_copy(toy, tmp_path):
    mutant = load_mutants(toy.course.mutants, toy, course_catalogue(toy))[0]
    dest = write_mutant(mutant, toy.course.reference_dir, tmp_path / "toypkg")
    reference = (toy.course.reference_dir / "scale.py").read_text()
    planted = (dest / "scale.py").read_text()
    assert planted == reference.replace(
        "return np.asarray(x) * factor", "return np.asarray(x) + factor"
    )
    assert planted != reference
    assert (dest / "normalize.py").read_bytes() == (
        toy.course.reference_dir / "normalize.py"
    ).read_bytes()


def test_write_variant_applies_a_list_of_edits(toy, tmp_path):
    variant = load_variants(toy.course.variants, toy)[1]
    dest = write_variant(variant, toy.course.reference_dir, tmp_path / "toypkg")
    assert "length = float(np.linalg.norm(v))" in (dest / "normalize.py").read_text()


# Catalogue errors --------------------------------------------------------------------------


def test_missing_catalogue_folder(tmp_path):
    folder = tmp_path / "mistakes"
    assert catalogue_error(folder) == catalogue_module.NO_FOLDER.format(path=folder)
    assert catalogue_error(folder) == (
        f"The mistakes catalogue {folder} does not exist; expected a folder of TOML files."
    )


def test_bad_slug(tmp_path):
    path = write(tmp_path, "scale.toml", ENTRY.format(slug="Adds_Factor"))
    message = catalogue_error(tmp_path)
    assert message == (
        f"The catalogue file {path} is not valid: mistakes.0.id: expected a slug (lowercase "
        "letters, digits, hyphens); got 'Adds_Factor'."
    )


def test_catalogue_file_named_after_no_component(tmp_path):
    path = write(tmp_path, "scaling.toml", ENTRY.format(slug="adds-factor"))
    assert catalogue_error(tmp_path) == (
        f"The catalogue file {path} is named after no component of the course; expected one "
        "of: scale, normalize."
    )


def test_duplicate_mistake_id(tmp_path):
    path = write(tmp_path, "scale.toml", ENTRY.format(slug="adds-factor") * 2)
    assert catalogue_error(tmp_path) == (
        f"The mistake scale/adds-factor is catalogued twice in {path}; each id must be unique."
    )


def test_unknown_id_asked_by_a_grader(toy):
    catalogue = course_catalogue(toy)
    with pytest.raises(CatalogueError) as caught:
        catalogue.sentence("scale/no-such-thing")
    assert str(caught.value) == (
        "No known mistake is catalogued as 'scale/no-such-thing'; check the id against the "
        f"catalogue {toy.course.mistakes}."
    )


# Mutant errors -----------------------------------------------------------------------------


def test_missing_mutants_folder(toy, tmp_path):
    folder = tmp_path / "mutants"
    message = mutant_error(load_mutants, folder, toy, course_catalogue(toy))
    assert message == mutants_module.NO_FOLDER.format(path=folder)


def test_mutants_file_named_after_no_component(toy, tmp_path):
    path = write(
        tmp_path, "norm.toml", '[[mutants]]\nmistake = "no-sqrt"\nfind = "a"\nreplace = "b"\n'
    )
    message = mutant_error(load_mutants, tmp_path, toy, course_catalogue(toy))
    assert message == (
        f"The mutants file {path} is named after no component of the course; expected one of: "
        "scale, normalize."
    )


def test_mutant_for_an_uncatalogued_mistake(toy, tmp_path):
    text = '[[mutants]]\nmistake = "no-sqrt"\nfind = "a"\nreplace = "b"\n'
    path = write(tmp_path, "scale.toml", text)  # no-sqrt is catalogued for normalize only
    message = mutant_error(load_mutants, tmp_path, toy, course_catalogue(toy))
    assert message == (
        f"The mutant 1 in {path} plants scale/no-sqrt, which the catalogue {toy.course.mistakes} "
        "does not list; add the mistake there first."
    )


def test_mutant_with_both_forms_of_edit(toy, tmp_path):
    text = (
        '[[mutants]]\nmistake = "no-sqrt"\nfind = "a"\nreplace = "b"\n'
        'edits = [{ find = "c", replace = "d" }]\n'
    )
    path = write(tmp_path, "normalize.toml", text)
    message = mutant_error(load_mutants, tmp_path, toy, course_catalogue(toy))
    assert message == (
        f"The mutants file {path} is not valid: mutants.0: value error, give either find and "
        "replace, or a list of edits, not both."
    )


def test_mutant_whose_text_to_find_is_gone(toy, tmp_path):
    text = '[[mutants]]\nmistake = "no-sqrt"\nfind = "return v * 2"\nreplace = "x"\n'
    write(tmp_path / "mutants", "normalize.toml", text)
    mutant = load_mutants(tmp_path / "mutants", toy, course_catalogue(toy))[0]
    message = mutant_error(write_mutant, mutant, toy.course.reference_dir, tmp_path / "out")
    assert message == (
        "The mutant normalize/no-sqrt cannot be applied: its text to find occurs 0 times in "
        "normalize.py; expected exactly once. Update it after changing the reference."
    )


def test_mutant_text_occurring_twice(toy, tmp_path):
    text = (
        '[[mutants]]\nmistake = "no-sqrt"\nfind = "np.asarray(x)"\nreplace = "x"\n'
        'file = "scale.py"\n'
    )
    write(tmp_path / "mutants", "normalize.toml", text)
    reference = tmp_path / "reference"
    write(reference, "scale.py", "y = np.asarray(x)\nz = np.asarray(x)\n")
    mutant = load_mutants(tmp_path / "mutants", toy, course_catalogue(toy))[0]
    message = mutant_error(write_mutant, mutant, reference, tmp_path / "out")
    assert message == (
        "The mutant normalize/no-sqrt cannot be applied: its text to find occurs 2 times in "
        "scale.py; expected exactly once. Update it after changing the reference."
    )


def test_mutant_editing_a_file_the_reference_does_not_have(toy, tmp_path):
    text = '[[mutants]]\nmistake = "no-sqrt"\nfind = "a"\nreplace = "b"\nfile = "norm.py"\n'
    write(tmp_path / "mutants", "normalize.toml", text)
    mutant = load_mutants(tmp_path / "mutants", toy, course_catalogue(toy))[0]
    reference = toy.course.reference_dir
    message = mutant_error(write_mutant, mutant, reference, tmp_path / "out")
    assert message == (
        f"The mutant normalize/no-sqrt edits norm.py, which the reference package {reference} "
        "does not have."
    )


@pytest.mark.parametrize("file", ["/tmp/reference/normalize.py", "../normalize.py", "a/../../x.py"])
def test_a_mutant_file_outside_the_package_is_refused_before_anything_is_written(
    toy, tmp_path, file
):
    """H43: an absolute `file` had `check` rewrite the reference itself (and read any file)."""
    text = f'[[mutants]]\nmistake = "no-sqrt"\nfind = "a"\nreplace = "b"\nfile = "{file}"\n'
    path = write(tmp_path, "normalize.toml", text)
    message = mutant_error(load_mutants, tmp_path, toy, course_catalogue(toy))
    assert message == (
        f"The mutants file {path} is not valid: mutants.0.file: value error, file must be a path "
        f"inside the reference package, such as 'attention.py'; got '{file}'."
    )


# Variant errors ----------------------------------------------------------------------------


def test_missing_variants_folder(toy, tmp_path):
    folder = tmp_path / "variants"
    assert mutant_error(load_variants, folder, toy) == (
        f"The variants folder {folder} does not exist; expected a folder of TOML files."
    )


def test_duplicate_variant_name(toy, tmp_path):
    entry = '[[variants]]\nname = "np-multiply"\nfind = "a"\nreplace = "b"\n'
    path = write(tmp_path, "scale.toml", entry * 2)
    assert mutant_error(load_variants, tmp_path, toy) == variants_module.DUPLICATE.format(
        id="scale/np-multiply", path=path
    )
    assert mutant_error(load_variants, tmp_path, toy) == (
        f"The variant scale/np-multiply is listed twice in {path}; each variant needs its own name."
    )


def test_variant_with_a_mistake_key_instead_of_a_name(toy, tmp_path):
    path = write(tmp_path, "scale.toml", '[[variants]]\nmistake = "x"\nfind = "a"\nreplace = "b"\n')
    assert mutant_error(load_variants, tmp_path, toy) == (
        f"The variants file {path} is not valid: variants.0.name: field required; "
        "variants.0.mistake: extra inputs are not permitted."
    )


def test_variant_whose_text_to_find_is_gone(toy, tmp_path):
    write(
        tmp_path / "variants",
        "scale.toml",
        '[[variants]]\nname = "v"\nfind = "zz"\nreplace = "b"\n',
    )
    variant = load_variants(tmp_path / "variants", toy)[0]
    message = mutant_error(write_variant, variant, toy.course.reference_dir, tmp_path / "out")
    assert message == (
        "The variant scale/v cannot be applied: its text to find occurs 0 times in scale.py; "
        "expected exactly once. Update it after changing the reference."
    )


def test_the_course_notes_are_named_by_their_own_titles():
    """The notes' titles read "Class 5: ..." and "Class 06: ...": a learner searches for what
    the feedback names, so each entry starts with one of them and quotes a section heading."""
    course = load_course(Path(__file__).resolve().parents[2] / "course.toml")
    notes = [mistake.notes for mistake in course_catalogue(course)]
    assert len(notes) > 50
    odd = [n for n in notes if not n.startswith(('Class 5, "', 'Class 06, "'))]
    assert odd == [], odd
