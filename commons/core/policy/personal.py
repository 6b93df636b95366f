"""The scrubber's rules for personal details beyond secrets: people's names, postal addresses,
national ids and bank details (docs/privacy.md "Personal details").

A name is found two ways: after words that introduce a person (``Dear``, ``Author:``,
``user.name``, ``"name": "…"``, "the customer"), or as a given name from a list of common given
names in many languages followed by a capitalised surname. A given name that is also an English
word (Will, Max, Grace, Mark) is left out of the list: "Max Retries" is a setting.

Numbers with check digits are checked (an IBAN's mod 97, a card's Luhn, a Spanish DNI's letter, a
Brazilian CPF's two digits, a Canadian SIN's Luhn), so a build number of the right length is kept.
"""

from __future__ import annotations

import re

from commons.core.policy.rule import Kind, Rule, make_rule

__all__ = ["NAME_RULES", "PERSONAL_RULES"]

# --------------------------------------------------------------------------------------------
# Names

GIVEN_NAMES = frozenset("""
aaliyah abdul abdullah abena abigail adaeze adebayo adeola adriana adrien agnieszka ahmad ahmed aiko
aisha akira akosua alejandra alejandro aleksandr aleksandra alessandra alessandro alexander alexandra
alexei alicia alina alisha amara amina anastasia anders andrea andreas andrei andrzej angela angelika
anika anita anja anjali anna annika anton antonio anushka arjun armando arturo ashley astrid aurelie
ayesha ayodele babajide barbara beatriz benedikt benjamin bernadette bianca birgit bjorn blessing
bogdan brigitte bronwyn camila carla carlos carmen carolina caroline catalina catherine cecilia
chiamaka chidi chinedu chinonso chioma christian christina christoph christopher claudia clement
constanze cristina daniela daniele danielle daria deepak deepika diana diego dmitri dmitry dominika
dorota dorothea eduardo ekaterina elena elif elisabeth elizabeth elke emeka emily emma emre enrique
erik esperanza esther eszter eugenia eva evgeny fatima federica felipe felix fernanda fernando
filipa florian francesca francesco francisco franziska fredrik friederike gabriel gabriela gabriele
ganesh gerhard giorgio giovanni giulia giuseppe gonzalo greta gunther gustavo hana hannah hans
harish heike heinrich helena helga hendrik hiroshi hiroko ibrahim ifeoma ignacio igor ikechukwu
ilse ines ingrid irina isabel isabella isabelle ivan jakob jan jana javier jennifer jessica jiang
joanna joao joaquin johanna johannes jorge jose josefina juan juliana julien jurgen kamala karin
karina katarzyna katharina kathrin kavita kazuki keiko kenji kerstin khalid kimberly klaus kofi
kristina kwabena kwame lakshmi laura leila lena leonardo leticia liam ling lisbeth lorenzo lucia
luciana ludmila luis luisa lukas magdalena mahmoud malgorzata manuel manuela marcela marcin marco
margarethe margarita maria mariana marina mario marisol marta martina maryam matteo matthias
mauricio maximilian mehmet melissa mercedes michael michaela michelle miguel mikhail milena mirela
miriam mohamed mohammed monika mustafa nadia nadine nanami natalia natasha nathalie nicolas nicole
niklas nikolai nkechi noura nuno obinna ola olga oliver olivia oluwaseun oluwatobi omar oscar
pablo paola patricia patrick paulina pedro petra pilar piotr priya rafael rahul rajesh ramon raquel
rebecca reinhard renata ricardo roberta roberto rodrigo rosa rosalind ruth sabine sakura samantha
samuel sandra sanjay santiago sara sarah sebastian sergei sergio shreya silvia simone siobhan sipho
sofia sofie solveig sophie stefan stefania stefanie stephanie sunita svetlana swati tamara tatiana
tatjana teresa thabo themba thiago thomas tobias tomasz ulrike umar ursula valentina valeria
vanessa veronika victoria vikram vincenzo vladimir wei wojciech xavier ximena yasmin yelena yuki
yuko yusuf zainab zanele zeynep zofia
""".split())

# Capitalised words that follow a given name in text that names no one ("Maria DB", "Ivan Error").
_NOT_SURNAMES = frozenset("""
db sql server client api app code test tests error errors exception team group project module
service admin user users account config the and or of for in on at to with from by is was has
""".split())

_CAP = r"[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’]+(?:-[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’]+)?"
_NAME = rf"{_CAP}(?:\s+(?:(?:de|da|do|dos|das|del|van|von|der|den|di|le|la|bin|al|ben)\s+)?{_CAP}){{1,2}}"


def _given_then_surname(m: re.Match[str]) -> bool:
    words = m.group("v").split()
    return (words[0].lower().replace("ã", "a").replace("ö", "o") in GIVEN_NAMES
            and words[-1].lower() not in _NOT_SURNAMES)


def _introduced(m: re.Match[str]) -> bool:
    words = [w.lower() for w in m.group("v").split()]
    return not any(w in _NOT_SURNAMES for w in words)


_INTRODUCERS = (r"(?:dear|hello|hi|hey|welcome back|thanks|thank you|regards|cheers|author|committer"
                r"|signed-off-by|co-authored-by|reviewed-by|reported-by|user\.name|customer|client|patient"
                r"|employee|applicant|recipient|contact|assignee|full[_ ]?name|first[_ ]?name|last[_ ]?name"
                r"|display[_ ]?name|contact[_ ]?name|customer[_ ]?name)")

_NAME_RULES: tuple[Rule, ...] = (
    make_rule("name-introduced", Kind.NAME,
              rf"(?i:\b{_INTRODUCERS})(?:\s*[:=,]\s*|\"\s*:\s*|\s+(?:the\s+)?)[\"']?(?-i:(?P<v>{_NAME}))",
              "dear hello hi hey welcome thank regards cheers author committer -by user.name customer client "
              "patient employee applicant recipient contact assignee name",
              _introduced, after=80),
    make_rule("name-json", Kind.NAME, rf"[\"'](?:name|fullName|full_name|displayName)[\"']\s*:\s*[\"'](?P<v>{_NAME})[\"']",
              "name", _introduced, after=80, before=4),
    make_rule("name-given", Kind.NAME, rf"(?<![\w.@/-])(?P<v>{_NAME})(?![\w@])", "",
              _given_then_surname, anchors=(r"[A-Z][a-z]+ [A-Z]",), after=60),
)

# --------------------------------------------------------------------------------------------
# Postal addresses

_STREET = (r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Ter"
           r"|Circle|Cir|Parkway|Pkwy|Highway|Hwy|Square|Sq|Crescent|Close|Grove|Gardens|Row|Mews|Trail|Alley)")
_CITY_TAIL = (r"(?:,?\s*(?:Suite|Ste|Apt|Unit|Flat|Floor|#)\.?\s*\w{1,6})?"
              r"(?:,\s*[A-Z][a-z]+(?:\s[A-Z][a-z]+)?)?(?:,?\s*[A-Z]{2}\s+\d{5}(?:-\d{4})?)?"
              r"(?:,?\s*[A-Z]{1,2}\d[A-Z\d]?\s\d[A-Z]{2})?")
_ADDRESS_RULES: tuple[Rule, ...] = (
    make_rule("address-number-street", Kind.ADDRESS,
              rf"(?<![\w.#-])(?P<v>\d{{1,5}}[A-Za-z]?\s+(?:[A-Z][a-z]+\s+){{1,3}}{_STREET}\b\.?{_CITY_TAIL})",
              "street st avenue ave road rd boulevard blvd lane ln drive dr court ct way place pl terrace "
              "circle parkway highway square crescent close grove gardens row mews trail alley",
              before=48, after=160),
    make_rule("address-de", Kind.ADDRESS,
              r"(?<![\w-])(?P<v>[A-ZÄÖÜ][a-zäöüß-]*(?:straße|strasse|weg|allee|platz|gasse|ring|damm|ufer)"
              r"\s+\d{1,4}[a-z]?(?:,\s*\d{5}\s+[A-ZÄÖÜ][a-zäöüß]+)?)",
              "straße strasse weg allee platz gasse ring damm ufer", before=40, after=80),
    make_rule("address-fr", Kind.ADDRESS,
              r"(?i)(?<![\w-])(?P<v>\d{1,4}(?:\s?(?:bis|ter))?,?\s+(?:rue|avenue|av\.|boulevard|bd|chemin|impasse"
              r"|allée|place|quai|route)\s+(?:d[eu]s?\s+|de\s+la\s+|d'|l')?[A-Za-zÀ-ÿ'-]+(?:\s+[A-Za-zÀ-ÿ'-]+){0,3}?"
              r"(?:,\s*\d{5}\s+[A-Za-zÀ-ÿ-]+)?)(?=[,.;)'\"]|\s+(?:is|est|in|à|et|and|,)|$)",
              "rue avenue av. boulevard bd chemin impasse allée place quai route", before=16, after=120),
    make_rule("address-es-pt-it", Kind.ADDRESS,
              r"(?<![\w-])(?P<v>(?:Calle|C/|Avenida|Avda\.?|Paseo|Plaza|Rua|Travessa|Largo|Via|Viale|Piazza|Corso)"
              r"\s+(?:(?:de|del|de la|da|das|do|dos|della|di)\s+)?(?:[A-ZÀ-Ý][\wÀ-ÿ']+\s*){1,4},?\s*\d{1,4}[A-Za-z]?"
              r"(?:,\s*\d{4,5}(?:-\d{3})?\s+[A-ZÀ-Ý][\wÀ-ÿ]+)?)",
              "calle c/ avenida avda paseo plaza rua travessa largo via viale piazza corso", after=120),
)

# --------------------------------------------------------------------------------------------
# National ids


def _ssn_digits(digits: str) -> bool:
    # never issued: area 000, 666 and 9xx, group 00, serial 0000
    return digits[:3] not in ("000", "666") and digits[0] != "9" and digits[3:5] != "00" and digits[5:] != "0000"


def _ssn(m: re.Match[str]) -> bool:
    return _ssn_digits(m.group("v").replace("-", ""))


def _luhn(digits: str) -> bool:
    d = [int(c) for c in digits][::-1]
    return (sum(d[0::2]) + sum(sum(divmod(2 * x, 10)) for x in d[1::2])) % 10 == 0


def _sin(m: re.Match[str]) -> bool:
    return _luhn(re.sub(r"\D", "", m.group("v")))


def _dni(m: re.Match[str]) -> bool:
    v = m.group("v").upper()
    number = v[:-1].replace("X", "0").replace("Y", "1").replace("Z", "2")
    return "TRWAGMYFPDXBNJZSQVHLCKE"[int(number) % 23] == v[-1]


def _cpf(m: re.Match[str]) -> bool:
    d = [int(c) for c in re.sub(r"\D", "", m.group("v"))]
    if len(set(d)) == 1:
        return False
    first = sum(x * w for x, w in zip(d[:9], range(10, 1, -1))) * 10 % 11 % 10
    second = sum(x * w for x, w in zip(d[:10], range(11, 1, -1))) * 10 % 11 % 10
    return d[9] == first and d[10] == second


_ID_RULES: tuple[Rule, ...] = (
    make_rule("us-ssn", Kind.NATIONAL_ID, r"(?<![\w-])(?P<v>\d{3}-\d{2}-\d{4})(?![\w-])", "", _ssn,
              anchors=(r"-\d\d-\d{4}",), before=4, after=16),
    make_rule("us-ssn-said", Kind.NATIONAL_ID,
              r"(?i)\b(?:ssn|social security(?: number| no\.?)?)\b\D{0,20}(?P<v>\d{3} \d{2} \d{4}|\d{9})\b",
              "ssn social security", lambda m: _ssn_digits(re.sub(r"\D", "", m.group("v"))), after=60),
    make_rule("uk-nino", Kind.NATIONAL_ID,
              r"(?<![\w])(?P<v>(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D])(?!\w)",
              "", anchors=(r"\d\d ?\d\d ?\d\d ?[A-D]\b",), before=8, after=16),
    make_rule("es-dni", Kind.NATIONAL_ID, r"(?<![\w-])(?P<v>(?:\d{8}|[XYZ]\d{7})[A-HJ-NP-TV-Z])(?![\w-])", "", _dni,
              anchors=(r"\d{7}[A-Z]\b",), before=4, after=12),
    make_rule("br-cpf", Kind.NATIONAL_ID, r"(?<![\w.-])(?P<v>\d{3}\.\d{3}\.\d{3}-\d{2})(?![\w-])", "", _cpf,
              anchors=(r"\.\d{3}-\d\d",), before=12, after=8),
    make_rule("ca-sin", Kind.NATIONAL_ID,
              r"(?i)\b(?:sin|social insurance(?: number)?|nas)\b\D{0,20}(?P<v>\d{3}[ -]?\d{3}[ -]?\d{3})(?![\w-])",
              "sin social nas", _sin, after=60),
)


# --------------------------------------------------------------------------------------------
# Bank details

_IBAN_LENGTHS = {"AD": 24, "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28, "CZ": 24, "DE": 22, "DK": 18,
                 "EE": 20, "ES": 24, "FI": 18, "FR": 27, "GB": 22, "GR": 27, "HR": 21, "HU": 28, "IE": 22,
                 "IS": 26, "IT": 27, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MT": 31, "NL": 18,
                 "NO": 15, "PL": 28, "PT": 25, "RO": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "TR": 26,
                 "BR": 29, "SA": 24, "AE": 23, "IL": 23, "UA": 29}


def _iban(m: re.Match[str]) -> bool:
    v = re.sub(r"\s", "", m.group("v"))
    if _IBAN_LENGTHS.get(v[:2]) != len(v):
        return False
    moved = v[4:] + v[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _card(m: re.Match[str]) -> bool:
    digits = re.sub(r"\D", "", m.group("v"))
    if digits == m.group("v") and len(digits) not in (15, 16):
        return False  # an unbroken run of another length is an id or a number in code
    return 13 <= len(digits) <= 19 and digits[0] in "3456" and len(set(digits)) > 2 and _luhn(digits)


_BANK_RULES: tuple[Rule, ...] = (
    make_rule("iban", Kind.BANK, r"(?<![\w])(?P<v>[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?)(?![\w])",
              "", _iban, anchors=(r"[A-Z]{2}\d\d ?[A-Z0-9]{4} ?[A-Z0-9]{4}",), after=48),
    make_rule("card-number", Kind.BANK, r"(?<![\w.-])(?P<v>[3-6]\d{3}(?:[ -]?\d{4}){2}[ -]?\d{1,7})(?![\w-])", "",
              _card, anchors=(r"\d{4}[ -]?\d{4}[ -]?\d{4}",), before=4, after=30),
)

PERSONAL_RULES: tuple[Rule, ...] = _ID_RULES + _BANK_RULES + _ADDRESS_RULES
NAME_RULES: tuple[Rule, ...] = _NAME_RULES
