from life import Board


def test_blinker():
    b = Board.from_text(".....\n..#..\n..#..\n..#..\n.....")
    assert str(b.step()) == ".....\n.....\n.###.\n.....\n....."


def test_block_still():
    b = Board.from_text("....\n.##.\n.##.\n....")
    assert b.step().alive == b.alive


def test_wrap_horizontal_blinker():
    b = Board(5, 5, {(4, 2), (0, 2), (1, 2)})
    assert b.step().alive == {(0, 1), (0, 2), (0, 3)}


def test_corner_neighbours():
    b = Board(4, 4, {(3, 3), (1, 0)})
    assert b.neighbours(0, 0) == 2
