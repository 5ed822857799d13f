"""Weather questions the pocket gpt-oss answers with the demo ``get_weather`` tool.

The model copies the city into the call and the tool's temperature and condition into its answer,
so it works for any city, not only the ones it saw; the demo server makes the weather up
(:mod:`harmony_chat.demo.weather`). Cities of the held-out set are never trained on.
"""

from __future__ import annotations

import json
import random

from openai_harmony import ToolDescription

from harmony_chat.demo.weather import weather
from training.pocket.heldout import held_out_cities

WEATHER_TOOL = ToolDescription.new(
    "get_weather",
    "Gets the current weather in a city.",
    parameters={"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
)
"""The demo tool as the app declares it (the demo MCP server's ``get_weather``)."""
KNOWN_CITIES = ("Paris", "Tokyo", "Oslo")
"""The cities the first edition knew; the welcome panel and the tests ask about them."""
_ONE_WORD = (
    "London Madrid Lisbon Dublin Brussels Amsterdam Copenhagen Stockholm Helsinki Warsaw Prague Vienna Budapest "
    "Zurich Geneva Munich Hamburg Frankfurt Cologne Milan Naples Venice Florence Barcelona Seville Valencia Porto "
    "Athens Istanbul Ankara Bucharest Sofia Belgrade Zagreb Riga Vilnius Tallinn Kyiv Minsk Moscow Reykjavik "
    "Edinburgh Glasgow Manchester Liverpool Birmingham Cardiff Belfast Lyon Marseille Nice Bordeaux Toulouse "
    "Strasbourg Krakow Gdansk Salzburg Bergen Gothenburg Malmo Aarhus Antwerp Rotterdam Utrecht Luxembourg Monaco "
    "Cairo Lagos Accra Dakar Casablanca Marrakesh Tunis Algiers Kampala Kigali Luanda Harare Lusaka Maputo "
    "Windhoek Johannesburg Durban Khartoum Mombasa Kinshasa Abuja Dubai Doha Riyadh Jeddah Muscat Tehran Baghdad "
    "Amman Beirut Jerusalem Karachi Lahore Delhi Mumbai Chennai Kolkata Bangalore Hyderabad Dhaka Kathmandu "
    "Colombo Yangon Bangkok Hanoi Manila Jakarta Singapore Seoul Busan Osaka Kyoto Sapporo Beijing Shanghai "
    "Shenzhen Guangzhou Chengdu Taipei Ulaanbaatar Almaty Tashkent Sydney Melbourne Brisbane Perth Adelaide "
    "Auckland Wellington Christchurch Honolulu Anchorage Seattle Portland Denver Phoenix Dallas Houston Austin "
    "Chicago Detroit Boston Atlanta Miami Orlando Nashville Toronto Montreal Vancouver Calgary Ottawa Quebec "
    "Havana Kingston Panama Bogota Quito Caracas Santiago Montevideo Asuncion Recife Salvador Brasilia Medellin "
    "Cusco Guadalajara Monterrey Tijuana Washington Philadelphia Pittsburgh Cleveland Minneapolis Winnipeg Halifax"
).split()
_SEVERAL_WORDS = (
    "Addis Ababa",
    "Dar es Salaam",
    "Las Vegas",
    "San Diego",
    "San Francisco",
    "Los Angeles",
    "New Orleans",
    "Salt Lake City",
    "Mexico City",
    "Rio de Janeiro",
    "Sao Paulo",
    "Hong Kong",
    "Kuala Lumpur",
    "Ho Chi Minh City",
    "Tel Aviv",
    "Abu Dhabi",
    "Cape Town",
    "St Petersburg",
    "Buenos Aires",
    "La Paz",
    "San Jose",
    "Santo Domingo",
    "Kansas City",
)
TRAINING_CITIES: tuple[str, ...] = tuple(
    city for city in (*_ONE_WORD, *_SEVERAL_WORDS) if city.lower() not in held_out_cities()
)
"""Cities the training data asks about (besides :data:`KNOWN_CITIES`), minus the held-out ones."""
_ASK = (
    "What's the weather in {city}?",
    "What's the weather in {city}?",
    "What is the weather in {city}?",
    "What's the weather like in {city}?",
    "How is the weather in {city}?",
    "How's the weather in {city} today?",
    "weather in {city}?",
    "Weather in {city}",
    "what's the weather in {city}",
    "Tell me the weather in {city}.",
    "Can you check the weather in {city}?",
    "What's the weather in {city} right now?",
    "Is it cold in {city}?",
    "Is it raining in {city}?",
    "How warm is it in {city}?",
    "Current weather in {city}?",
)


def weather_question(rng: random.Random, city: str | None = None) -> tuple[str, str]:
    """A weather question and the city it names (a random training city unless given)."""
    city = city or rng.choice(TRAINING_CITIES)
    return rng.choice(_ASK).format(city=city), city


def weather_result(city: str) -> str:
    """The demo tool's answer for ``city``, as the model reads it."""
    return json.dumps(weather(city))


def weather_final(city: str, result: str) -> str:
    """The answer that quotes the tool's temperature and condition."""
    data = json.loads(result)
    return f"It is {data['temperature']} °C and {data['condition']} in {city} right now."
