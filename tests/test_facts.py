"""Facts: a source cut into statements of one piece of information each, in its own words."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from offline_scorer.scorers.summarization.facts import (
    Fact,
    chosen,
    clauses,
    fact_questions,
    facts_of,
    is_fragment,
)
from offline_scorer.scorers.summarization.grounding import QUESTION_FRAME
from tests.conftest import ROOT

SHOP = (
    "The new shop will open at 6:30 a.m. on weekdays and 7:30 a.m. on weekends, and will sell "
    "sandwiches and soup at lunchtime in addition to bread and pastries."
)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[^\W_]+", text.lower()))


def test_two_predicates_of_one_subject_become_two_facts_with_the_subject_repeated() -> None:
    assert clauses(SHOP) == [
        "The new shop will open at 6:30 a.m. on weekdays and 7:30 a.m. on weekends",
        "The new shop will sell sandwiches and soup at lunchtime in addition to bread and pastries",
    ]


def test_two_clauses_joined_by_a_comma_and_and_become_two_facts() -> None:
    sentence = (
        "Patients do not need to re-register, and existing appointments will be transferred "
        "automatically."
    )
    assert clauses(sentence) == [
        "Patients do not need to re-register",
        "existing appointments will be transferred automatically",
    ]


def test_a_past_predicate_after_and_shares_the_subject() -> None:
    sentence = (
        "Engineers from Quillmarsh Structural Services inspected the bridge in January and "
        "found that two of its eight support beams had lost more than a third of their "
        "original thickness."
    )
    first, second = clauses(sentence)
    assert first == "Engineers from Quillmarsh Structural Services inspected the bridge in January"
    assert second.startswith("Engineers from Quillmarsh Structural Services found that two")


def test_a_list_and_an_adjective_in_ed_are_not_cut() -> None:
    listed = (
        "Forest crews and volunteers built a new stone staircase, two footbridges, and drainage "
        "channels along the damaged section."
    )
    assert clauses(listed) == [listed.rstrip(".")]
    infinitive = (
        "The students plan to repeat the count each summer and will publish their data on the "
        "college website."
    )
    assert clauses(infinitive) == [infinitive.rstrip(".")]  # no subject the rules can see


def test_a_clause_opening_with_a_pronoun_is_not_cut_off() -> None:
    sentence = "The council approved the plan for the harbor, and it will start work in April."
    assert clauses(sentence) == [sentence.rstrip(".")]


def test_a_transcript_keeps_each_statement_with_its_speaker_and_drops_questions() -> None:
    source = (
        "Anna: Are you coming to the meeting tomorrow?\n"
        "Ben: Yes, I will bring the printed budget report.\n"
        "Anna: Great, the room is booked until noon.\n"
        "Ben: Um okay"
    )
    facts = facts_of(source, clock_always_ends=False)
    assert [f.statement() for f in facts] == [
        'Ben said "I will bring the printed budget report"',
        'Anna said "Great, the room is booked until noon"',
    ]
    assert facts[0].question() == (
        'Is it true that Ben said "I will bring the printed budget report"?'
    )


def test_an_email_with_labelled_lines_is_not_a_transcript() -> None:
    source = (
        "Subject: New pricing for the CloudTrek plans\n\nDear John,\n\n"
        "We are introducing three new plans for your team this spring.\n"
        "Regular Price: 50 dollars per user per month.\n"
        "Special Offer: 35 dollars per user per month for the first year."
    )
    statements = [f.statement() for f in facts_of(source, clock_always_ends=False)]
    assert all(" said " not in s for s in statements)
    assert "we are introducing three new plans for your team this spring" in statements


def test_openers_and_cut_off_lines_are_not_facts() -> None:
    source = (
        "PM: And the remote control has two parts for two kinds of users.\n"
        "UI: Well, but the voice recognition is hard to learn for older people.\n"
        "PM: So it's maybe not very easy for"
    )
    statements = [f.text for f in facts_of(source, clock_always_ends=False)]
    assert statements == [
        "the remote control has two parts for two kinds of users",
        "the voice recognition is hard to learn for older people",
    ]


def test_a_fact_opening_a_sentence_reads_on_after_the_question_frame() -> None:
    source = (
        "Residents of Ashcombe can borrow seeds. Add the squash to the pot and stir it well. "
        "Council member Dana Ortley said the town council of Ashcombe met twice."
    )
    questions = [f.question() for f in facts_of(source, clock_always_ends=False)]
    assert questions[0] == "Is it true that residents of Ashcombe can borrow seeds?"
    assert questions[1] == "Is it true that add the squash to the pot and stir it well?"
    assert questions[2].startswith("Is it true that council member Dana Ortley said")


def test_fragments_are_named_by_their_end_and_their_content() -> None:
    assert is_fragment("it's not very easy for")
    assert is_fragment("um uh yes")
    assert is_fragment("the (new plan will start")
    assert not is_fragment("the new plan will start in April")


def test_the_facts_of_most_weight_are_chosen_and_kept_in_source_order() -> None:
    facts = facts_of(
        "The bridge will close in April. The bridge repairs cost two million dollars. "
        "A bakery opened on Canal Street last week. The bridge closure lasts eleven weeks. "
        "Parking near the harbor costs three dollars an hour.",
        clock_always_ends=False,
    )
    picked = chosen(facts, " ".join(f.text for f in facts), 3)
    assert len(picked) == 3
    assert [f.order for f in picked] == sorted(f.order for f in picked)
    assert any("bridge" in f.text for f in picked)
    assert chosen(facts, "", 10) == facts  # fewer facts than asked: all, as they are


def test_fixture_questions_are_statements_of_their_source_in_its_words() -> None:
    for line in (ROOT / "fixtures" / "pairs.jsonl").read_text(encoding="utf-8").splitlines():
        source = json.loads(line)["source"]
        questions = fact_questions(source, 10, clock_always_ends=False)
        assert questions and len(set(questions)) == len(questions)
        for question in questions:
            assert question.startswith(QUESTION_FRAME) and question.endswith("?")
            body = question[len(QUESTION_FRAME) : -1]
            assert _words(body) <= _words(source), question
            assert not is_fragment(body), question


_SENTENCES = st.lists(
    st.sampled_from(
        [
            "The council voted to close the bridge in April",
            "Crews will replace the beams, and traffic will use the Mill Road crossing",
            "The shop will open at six and will sell bread",
            "Owners said the site will add twelve jobs",
            "Is the ferry running on Sunday",
            "Lol",
            "Tickets cost twelve euros; children travel free on weekends",
        ]
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(_SENTENCES)
def test_every_fact_is_a_whole_statement_in_the_sources_words(parts: list[str]) -> None:
    source = ". ".join(parts) + "."
    facts = facts_of(source, clock_always_ends=False)
    statements = [f.statement() for f in facts]
    assert len(set(statements)) == len(statements)
    for fact in facts:
        assert isinstance(fact, Fact)
        assert _words(fact.text) <= _words(source)
        assert not is_fragment(fact.text)
