"""The API's warnings at a command line, in its words (``iclr25._cli.api_warnings``): one
printer that ``gsd train`` (as they come) and ``lsdt evaluate`` (after its checks) share."""

from __future__ import annotations

import warnings

import pytest

from iclr25._cli import api_warnings, option_words

_SAID = ("the training data's episodes last at most 20 steps and the rollouts up to 200 "
         "(max_episode_steps=20 rolls out as long as the data's episodes)")


def test_option_words_spells_an_api_keyword_as_the_option_quoted_or_not():
    # closing note 9: gsd train replaced "max_episode_steps=" itself and lsdt evaluate built
    # its own copy of the warning; option_words took only quoted values (fallback='input')
    assert option_words(_SAID, ("max_episode_steps",)) == _SAID.replace(
        "max_episode_steps=20", "--max-episode-steps 20")
    assert option_words("fallback='input' keeps it, fallback=None not; max_episode_stepsx=3",
                        ("fallback", "max_episode_steps")) == (
        "--fallback input keeps it, --fallback None not; max_episode_stepsx=3")


def test_api_warnings_collects_them_for_after_the_checks_or_prints_them_as_they_come(capsys):
    lines: list[str] = ["note: first"]
    with api_warnings(("max_episode_steps",), lines):
        warnings.warn(_SAID, UserWarning, stacklevel=1)
    assert lines == ["note: first", "warning: " + _SAID.replace("max_episode_steps=20",
                                                                 "--max-episode-steps 20")]
    assert capsys.readouterr().err == ""                      # nothing printed yet
    with api_warnings(("max_episode_steps",)):
        warnings.warn(_SAID, UserWarning, stacklevel=1)
        assert capsys.readouterr().err == "warning: " + option_words(
            _SAID, ("max_episode_steps",)) + "\n"             # printed before the block ends
    with warnings.catch_warnings(record=True) as caught:      # the printer is gone after it
        warnings.simplefilter("always")
        warnings.warn("later", UserWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["later"]


def test_api_warnings_prints_a_warning_the_filters_make_an_error_and_keeps_the_rest():
    # review of issue 68's stop (hreview10): with PYTHONWARNINGS=error, `lsdt evaluate`
    # ended in a traceback (exit 1) at evaluate's own warning, where it had printed it
    lines: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message="quiet", category=UserWarning)
        with api_warnings(("max_episode_steps",), lines):
            for _ in range(2):                                     # printed, not raised,
                warnings.warn(_SAID, UserWarning, stacklevel=1)    # once from one line
            warnings.warn("quiet please", UserWarning, stacklevel=1)   # ignore kept
        assert lines == ["warning: " + option_words(_SAID, ("max_episode_steps",))]
        with pytest.raises(UserWarning, match="after"):             # the filters restored
            warnings.warn("after", UserWarning, stacklevel=1)


def test_api_warnings_names_what_they_concern_and_leaves_out_the_api_name(capsys):
    # issue 68 tidy: dcpt, lowlight and toss had their own printer (warning_lines), which
    # prefixed the verb or image and stripped the API's name; one printer does both now
    with api_warnings(("fallback",), name="cat.png", api="dcpt.restore"):
        warnings.warn("dcpt.restore: worse; returned the input (fallback='input')",
                      UserWarning, stacklevel=1)
    lines: list[str] = []
    with api_warnings((), lines, name="toss fit", api="dcpt.restore"):
        warnings.warn("lowlight.enhance: kept, another API's name", UserWarning, stacklevel=1)
    assert capsys.readouterr().err == ("warning: cat.png: worse; returned the input "
                                       "(--fallback input)\n")
    assert lines == ["warning: toss fit: lowlight.enhance: kept, another API's name"]


def _warn_twice_per_block(n_blocks: int) -> list[str]:
    lines: list[str] = []
    for _ in range(n_blocks):
        with api_warnings((), lines, name="x.png"):
            for _ in range(2):
                warnings.warn("the same words", UserWarning, stacklevel=1)
    return lines


def test_api_warnings_policy_default_once_per_block_ignore_silent_error_printed():
    # one policy for every verb: Python's default says it once per block (each image of a
    # folder is its own block, so each gets its warning); a user's ignore silences it (the
    # image verbs printed it under -W ignore before); error prints it instead of raising
    for action, per_block in (("default", 1), ("error", 1), ("ignore", 0), ("always", 2)):
        with warnings.catch_warnings():
            warnings.simplefilter(action)
            assert _warn_twice_per_block(3) == ["warning: x.png: the same words"] * (
                3 * per_block), action
