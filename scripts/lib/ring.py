"""The ring rosters every private test server gets (scripts/provision-prosody.py, jabberd2-server,
servers): account i of 1..count has the `contacts` accounts around it on a ring as mutual contacts,
half before it and the rest after it, each once and never itself."""


def neighbours(i, count, contacts):
    """The account numbers in account i's roster, in ring order (i and the results are 1-based)."""
    half = contacts // 2
    result = []
    for d in list(range(-half, 0)) + list(range(1, contacts - half + 1)):
        j = (i - 1 + d) % count + 1
        if j != i and j not in result:
            result.append(j)
    return result
