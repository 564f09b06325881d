"""Shared benchmark text: realistic mixed English / CJK / emoji output, NFC-normalised."""

from __future__ import annotations

import unicodedata

_PARAGRAPHS = [
    "Sure! Here is a short travel plan for three days in Tokyo and Kyoto, with a few notes "
    "in Japanese and Chinese for the places you mentioned. 🚄🗾",
    "Day 1 — Tokyo: start early at the Tsukiji outer market (築地場外市場) for breakfast 🍣, then "
    "walk to Ginza. In the afternoon visit Asakusa and the Sensō-ji temple (浅草寺). The "
    "evening view from the Tokyo Skytree is worth the ¥2,100 ticket. 東京の夜景はとても綺麗です。",
    "Day 2 — Kyoto: take the Nozomi shinkansen (about 2h15m). Check in, then go to Fushimi "
    "Inari (伏見稲荷大社) before 4 p.m. to avoid the crowds ⛩️. 我建议你穿舒服的鞋子，因为要爬"
    "很多台阶。Dinner in Pontochō: try kaiseki or a simple bowl of ramen 🍜.",
    "Day 3 — Arashiyama: the bamboo grove (竹林の小径) is quiet before 8 a.m. 🎋. Rent a bike, "
    "visit Tenryū-ji, and cross the Togetsukyō bridge. 如果天气好，可以坐嵯峨野观光小火车。 "
    "Return to Tokyo in the evening; the last Nozomi leaves around 21:30.",
    "Budget (per person): hotel ≈ ¥12,000/night, JR pass or single tickets ≈ ¥28,000, food "
    "≈ ¥5,000/day. Total: roughly ¥75,000 — about €460 or $500. 💴💶💵",
    "Useful phrases: すみません (excuse me), ありがとうございます (thank you), 这个多少钱？ "
    "(how much is this?), 请问洗手间在哪里？ (where is the restroom?). Family travel tip 👨‍👩‍👧‍👦: "
    "many temples are stroller-unfriendly. Flags you may see: 🇯🇵 🇨🇳 🇰🇷 🇫🇷 🇺🇸. Thumbs up "
    "👍🏽 and have fun! 🎉✨",
    "| Day | City | Highlights | 预算 |\n|---|---|---|---|\n| 1 | 東京 | Tsukiji, Asakusa, "
    "Skytree 🗼 | ¥25,000 |\n| 2 | 京都 | Fushimi Inari ⛩️, Pontochō | ¥30,000 |\n| 3 | 嵐山 | "
    "Bamboo grove 🎋, Tenryū-ji | ¥20,000 |",
    "A note on seasons: cherry blossoms (桜, sakura 🌸) usually peak in early April, while autumn "
    "leaves (紅葉, kōyō 🍁) are best in mid-November. Summer is hot and humid — often above 35 °C "
    "— so carry water 💧 and a small towel. Winter is dry and sunny; Kyoto occasionally gets snow "
    "❄️, which makes Kinkaku-ji (金閣寺) look spectacular. 한국에서 오시는 분들은 부산에서 "
    "페리를 타고 후쿠오카로 가는 방법도 있어요. 🚢",
    "Etiquette checklist ✅: take your shoes off where you see a step up at the entrance; do not "
    "tip (チップは不要です); keep quiet on trains 🤫; queue on the left of escalators in Tokyo but "
    "on the right in Osaka. 在日本，垃圾要分类，很多街上没有垃圾桶，所以最好随身带一个小袋子。 "
    "Also: cash is still common, so keep some ¥1,000 notes 💴 and coins for shrines. 🙏",
    "Packing list 🎒: passport 🛂, IC card (Suica/ICOCA), power adapter (type A, 100 V ⚡), "
    "umbrella ☂️, comfortable shoes 👟, a light jacket 🧥. Optional: pocket Wi-Fi 📶, a phrase "
    "book 📖, and a small gift 🎁 for your hosts if you stay in a ryokan (旅館). 🧳👩🏻‍💻🧑🏿‍🍳",
    "```python\ndef yen_to_eur(yen: int, rate: float = 0.0061) -> float:\n    return round(yen * "
    "rate, 2)\n\nprint(yen_to_eur(75_000))  # ≈ 457.5\n```",
    "Let me know if you want the plan adjusted for a rainy day ☔ — 雨の日でも楽しめる美術館や"
    "博物館もたくさんあります。祝你旅途愉快！😊",
]

TEXT: str = unicodedata.normalize("NFC", "\n\n".join(_PARAGRAPHS))
