from life import Board


def test_glider_wraps():
    b = Board.from_text(".#....\n..#...\n###...\n......\n......\n......")
    start = b.alive
    for _ in range(24):
        b = b.step()
    assert b.alive == start


def test_top_row_no_double_count():
    b = Board(5, 5, {(2, 4)})
    assert b.neighbours(2, 0) == 1
    assert b.neighbours(2, 1) == 0


def test_small_board():
    b = Board(3, 3, {(0, 0)})
    assert b.neighbours(2, 2) == 1 and b.neighbours(1, 1) == 1
